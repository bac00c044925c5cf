package shapepoly

import (
	"math"
	"strconv"
)

// Float16 is an IEEE binary16 (half-precision) value held as its 16 bits: the element type of
// F16 arrays. Go has no half-precision type; Float16FromFloat32 and Float32 convert, and
// Float16(bits) / uint16(h) reinterpret the bits. A distinct type from uint16 (U16) and
// BFloat16 (BF16), so NewArray knows the dtype of a []Float16.
type Float16 uint16

// BFloat16 is a bfloat16 value (the upper half of a binary32) held as its 16 bits: the element
// type of BF16 arrays. BFloat16FromFloat32 and Float32 convert.
type BFloat16 uint16

// Float16FromFloat32 rounds f to the nearest binary16 (ties to even): too large becomes
// infinity, too small a subnormal or zero (keeping the sign), NaN stays NaN (quiet).
func Float16FromFloat32(f float32) Float16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // infinity, or NaN made quiet (keeping the payload's top bits)
		if man == 0 {
			return Float16(sign | 0x7c00)
		}
		return Float16(sign | 0x7e00 | uint16(man>>13))
	}
	e := exp - 127 + 15 // the binary16 exponent field
	if e >= 0x1f {
		return Float16(sign | 0x7c00)
	}
	if e <= 0 { // a subnormal (units of 2^-24) or zero; below 2^-25 everything rounds to 0
		if e < -10 {
			return Float16(sign)
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		kept := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && kept&1 == 1) {
			kept++ // a carry makes the smallest normal
		}
		return Float16(sign | uint16(kept))
	}
	kept := uint32(e)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && kept&1 == 1) {
		kept++ // a carry out of the largest finite value makes infinity
	}
	return Float16(sign | uint16(kept))
}

// Float32 returns h as a float32 (exact).
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalize into a binary32 normal
		e := uint32(113) // the binary32 exponent field of 2^-14
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// IsNaN reports whether h is NaN.
func (h Float16) IsNaN() bool { return h&0x7fff > 0x7c00 }

// String formats the value as a float32 does.
func (h Float16) String() string { return strconv.FormatFloat(float64(h.Float32()), 'g', -1, 32) }

// BFloat16FromFloat32 rounds f to the nearest bfloat16 (ties to even): too large becomes
// infinity, NaN stays NaN (quiet).
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if math.IsNaN(float64(f)) {
		return BFloat16(uint16(b>>16) | 0x40)
	}
	// Adding 0x7fff plus the kept lowest bit rounds to nearest even; a carry out of the largest
	// finite value makes infinity.
	return BFloat16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Float32 returns b as a float32 (exact).
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// IsNaN reports whether b is NaN.
func (b BFloat16) IsNaN() bool { return b&0x7fff > 0x7f80 }

// String formats the value as a float32 does.
func (b BFloat16) String() string { return strconv.FormatFloat(float64(b.Float32()), 'g', -1, 32) }
