//! The 16-bit float element types [`F16`] (IEEE binary16) and [`Bf16`] (bfloat16): their bits,
//! with conversions to and from `f32`. The binding has no third-party dependency, so these are
//! its own: a `#[repr(transparent)]` wrapper of the `u16` the library stores, which keeps them
//! apart from `u16` (dtype `U16`) wherever a Rust type picks the dtype ([`Element`]).
//!
//! [`Element`]: crate::Element
use std::cmp::Ordering;
use std::fmt;

/// An IEEE binary16 (half-precision) value, stored as its 16 bits: the element type of
/// [`DType::F16`](crate::DType::F16). Compares and prints as the number it holds.
///
/// ```
/// use shapepoly::F16;
/// let h = F16::from_f32(1.5);
/// assert_eq!((h.to_bits(), h.to_f32()), (0x3e00, 1.5));
/// assert_eq!(F16::from_f32(65520.0).to_f32(), f32::INFINITY); // rounds to nearest even
/// ```
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct F16(u16);

/// A bfloat16 value (the upper half of a binary32), stored as its 16 bits: the element type of
/// [`DType::Bf16`](crate::DType::Bf16). Compares and prints as the number it holds.
///
/// ```
/// use shapepoly::Bf16;
/// let b = Bf16::from_f32(1.0 + 1.0 / 256.0); // halfway between 1 and 1 + 2^-7: to even
/// assert_eq!((b.to_bits(), b.to_f32()), (0x3f80, 1.0));
/// assert_eq!(Bf16::from_bits(0x4049).to_f32(), 3.140625);
/// ```
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct Bf16(u16);

impl F16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `v` rounded to the nearest binary16 (ties to even): too large becomes infinity, too
    /// small a subnormal or zero (keeping the sign), NaN stays NaN (quiet).
    pub fn from_f32(v: f32) -> F16 {
        F16(f32_to_f16_bits(v))
    }

    /// The value as `f32` (exact).
    pub fn to_f32(self) -> f32 {
        f16_bits_to_f32(self.0)
    }

    /// Whether the value is NaN.
    pub fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7c00
    }
}

impl Bf16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> Bf16 {
        Bf16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `v` rounded to the nearest bfloat16 (ties to even): too large becomes infinity, NaN
    /// stays NaN (quiet).
    pub fn from_f32(v: f32) -> Bf16 {
        Bf16(f32_to_bf16_bits(v))
    }

    /// The value as `f32` (exact).
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }

    /// Whether the value is NaN.
    pub fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7f80
    }
}

macro_rules! float_traits {
    ($t:ident) => {
        impl From<$t> for f32 {
            fn from(v: $t) -> f32 {
                v.to_f32()
            }
        }

        impl From<$t> for f64 {
            fn from(v: $t) -> f64 {
                v.to_f32() as f64
            }
        }

        /// As numbers: NaN is unequal to everything, `0 == -0`.
        impl PartialEq for $t {
            fn eq(&self, other: &$t) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &$t) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}
float_traits!(F16);
float_traits!(Bf16);

/// binary32 -> binary16 bits, rounded to nearest even.
fn f32_to_f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x007f_ffff;
    if exp == 0xff {
        // Infinity, or NaN made quiet (keeping the payload's top bits).
        return if man == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | (man >> 13) as u16
        };
    }
    let e = exp - 127 + 15; // the binary16 exponent field
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // A binary16 subnormal (units of 2^-24) or zero; below 2^-25 everything rounds to 0.
        if e < -10 {
            return sign;
        }
        let m = man | 0x0080_0000;
        let shift = (14 - e) as u32;
        let kept = m >> shift;
        let rest = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let up = rest > half || (rest == half && kept & 1 == 1);
        return sign | (kept + up as u32) as u16; // a carry makes the smallest normal
    }
    let kept = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    let up = rest > 0x1000 || (rest == 0x1000 && kept & 1 == 1);
    sign | (kept + up as u32) as u16 // a carry out of the largest finite makes infinity
}

/// binary16 bits -> binary32 (exact).
fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x03ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalize into a binary32 normal.
            let mut e = 113u32; // binary32 exponent field of 2^-14
            let mut m = man;
            while m & 0x0400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x03ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// binary32 -> bfloat16 bits, rounded to nearest even.
fn f32_to_bf16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    if v.is_nan() {
        return ((b >> 16) as u16) | 0x0040;
    }
    // Adding 0x7fff plus the kept lowest bit rounds to nearest even; a carry out of the largest
    // finite value makes infinity.
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_every_value() {
        for bits in 0..=u16::MAX {
            let h = F16::from_bits(bits);
            let back = F16::from_f32(h.to_f32());
            if h.is_nan() {
                assert!(back.is_nan() && back.to_bits() & 0x8000 == bits & 0x8000);
            } else {
                assert_eq!(back.to_bits(), bits, "{:#06x}", bits);
            }
        }
    }

    fn p2(e: i32) -> f32 {
        2f32.powi(e)
    }

    #[test]
    fn f16_rounding() {
        let cases: &[(f32, u16)] = &[
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (65504.0, 0x7bff),
            (65519.99, 0x7bff),
            (65520.0, 0x7c00), // halfway to 2^16: to even, infinity
            (1e10, 0x7c00),
            (f32::INFINITY, 0x7c00),
            (f32::NEG_INFINITY, 0xfc00),
            (p2(-24), 0x0001),             // the smallest subnormal
            (p2(-25), 0x0000),             // halfway: to even (zero)
            (p2(-25) * 1.000_001, 0x0001), // just above 2^-25
            (-1.5 * p2(-24), 0x8002),      // halfway: to even (2)
            (1023.0 * p2(-24), 0x03ff),    // the largest subnormal
            (p2(-14), 0x0400),             // the smallest normal
            (1023.5 * p2(-24), 0x0400),    // halfway, odd below: up into the normals
            (1.0 + 1.0 / 2048.0, 0x3c00),  // halfway between 1 and 1 + 2^-10: to even
            (1.0 + 3.0 / 2048.0, 0x3c02),  // halfway, odd below: up
            (1e-10, 0x0000),
            (f32::from_bits(1), 0x0000), // a binary32 subnormal
        ];
        for &(v, bits) in cases {
            assert_eq!(F16::from_f32(v).to_bits(), bits, "{:e}", v);
        }
        assert!(F16::from_f32(f32::NAN).is_nan());
        assert!(F16::from_f32(f32::from_bits(0x7f80_0001)).is_nan()); // payload only in low bits
        assert_eq!(F16::from_bits(0x0001).to_f32(), p2(-24));
        assert_eq!(F16::from_bits(0x7c00).to_f32(), f32::INFINITY);
        assert!(F16::from_bits(0x7e00).to_f32().is_nan());
    }

    #[test]
    fn bf16_rounding() {
        let cases: &[(f32, u16)] = &[
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3f80),
            (1.0 + 1.0 / 256.0, 0x3f80), // halfway: to even
            (1.0 + 3.0 / 256.0, 0x3f82), // halfway, odd below: up
            (1.0 + 1.0 / 255.0, 0x3f81),
            (f32::MAX, 0x7f80), // rounds up to infinity
            (f32::INFINITY, 0x7f80),
            (f32::NEG_INFINITY, 0xff80),
            (f32::from_bits(0x0000_8000), 0x0000), // subnormal halfway: to even
            (f32::from_bits(0x0001_8000), 0x0002),
            (f32::from_bits(0x0001_7fff), 0x0001),
        ];
        for &(v, bits) in cases {
            assert_eq!(Bf16::from_f32(v).to_bits(), bits, "{:e}", v);
        }
        assert!(Bf16::from_f32(f32::NAN).is_nan());
        assert!(Bf16::from_f32(f32::from_bits(0x7f80_0001)).is_nan());
        for bits in 0..=u16::MAX {
            let b = Bf16::from_bits(bits);
            if !b.is_nan() {
                assert_eq!(Bf16::from_f32(b.to_f32()).to_bits(), bits);
            }
        }
    }

    #[test]
    fn compare_and_print_as_numbers() {
        assert_eq!(F16::from_f32(0.0), F16::from_f32(-0.0));
        assert_ne!(F16::from_f32(f32::NAN), F16::from_f32(f32::NAN));
        assert!(Bf16::from_f32(1.0) < Bf16::from_f32(2.0));
        assert_eq!(
            format!("{} {:?}", F16::from_f32(0.5), Bf16::from_f32(-3.0)),
            "0.5 -3.0"
        );
        assert_eq!(f64::from(F16::from_bits(0x3555)), 0.333_251_953_125);
    }
}
