using System;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    /// <summary>IEEE binary16 (half precision, <see cref="DType.F16"/>) values held as their 16
    /// bits in a <c>ushort</c>. The binding builds with mono's class library, which has no
    /// <c>System.Half</c>; these convert to and from <c>float</c>. Arrays of such bits become
    /// F16 arrays through <see cref="NdArray.FromF16Bits"/> (a plain <c>ushort[]</c> is
    /// <see cref="DType.U16"/>).</summary>
    public static class F16Bits
    {
        /// <summary><paramref name="value"/> rounded to the nearest binary16 (ties to even): too
        /// large becomes infinity, too small a subnormal or zero (keeping the sign), NaN stays NaN
        /// (quiet).</summary>
        public static ushort FromSingle(float value)
        {
            uint b = FloatBits.Of(value);
            uint sign = (b >> 16) & 0x8000;
            int exp = (int)((b >> 23) & 0xff);
            uint man = b & 0x7fffff;
            if (exp == 0xff)  // infinity, or NaN made quiet (keeping the payload's top bits)
                return (ushort)(man == 0 ? sign | 0x7c00u : sign | 0x7e00u | (man >> 13));
            int e = exp - 127 + 15;  // the binary16 exponent field
            if (e >= 0x1f) return (ushort)(sign | 0x7c00u);
            uint kept, rest, half;
            if (e <= 0)
            {
                // A subnormal (units of 2^-24) or zero; below 2^-25 everything rounds to 0.
                if (e < -10) return (ushort)sign;
                uint m = man | 0x800000;
                int shift = 14 - e;
                kept = m >> shift;
                rest = m & ((1u << shift) - 1);
                half = 1u << (shift - 1);
            }
            else
            {
                kept = ((uint)e << 10) | (man >> 13);
                rest = man & 0x1fff;
                half = 0x1000;
            }
            // A carry makes the smallest normal, or infinity out of the largest finite value.
            if (rest > half || (rest == half && (kept & 1) == 1)) kept++;
            return (ushort)(sign | kept);
        }

        /// <summary>The binary16 value of <paramref name="bits"/> as a float (exact).</summary>
        public static float ToSingle(ushort bits)
        {
            uint sign = (uint)(bits & 0x8000) << 16;
            uint exp = (uint)(bits >> 10) & 0x1f;
            uint man = (uint)bits & 0x3ff;
            if (exp == 0)
            {
                if (man == 0) return FloatBits.From(sign);
                uint e = 113;  // subnormal: normalize into a binary32 normal (2^-14 has field 113)
                while ((man & 0x400) == 0) { man <<= 1; e--; }
                return FloatBits.From(sign | (e << 23) | ((man & 0x3ff) << 13));
            }
            if (exp == 0x1f) return FloatBits.From(sign | 0x7f800000 | (man << 13));
            return FloatBits.From(sign | ((exp + 112) << 23) | (man << 13));
        }

        /// <summary>Whether <paramref name="bits"/> is a binary16 NaN.</summary>
        public static bool IsNaN(ushort bits) { return (bits & 0x7fff) > 0x7c00; }

        /// <summary><see cref="FromSingle"/> of each value.</summary>
        public static ushort[] FromSingles(float[] values)
        {
            if (values == null) throw new ArgumentNullException("values");
            return Array.ConvertAll(values, FromSingle);
        }

        /// <summary><see cref="ToSingle"/> of each value.</summary>
        public static float[] ToSingles(ushort[] bits)
        {
            if (bits == null) throw new ArgumentNullException("bits");
            return Array.ConvertAll(bits, ToSingle);
        }
    }

    /// <summary>bfloat16 (<see cref="DType.BF16"/>: the upper half of a binary32) values held
    /// as their 16 bits in a <c>ushort</c>, with conversions to and from <c>float</c>. Arrays of
    /// such bits become BF16 arrays through <see cref="NdArray.FromBF16Bits"/> (a plain
    /// <c>ushort[]</c> is <see cref="DType.U16"/>).</summary>
    public static class BF16Bits
    {
        /// <summary><paramref name="value"/> rounded to the nearest bfloat16 (ties to even): too
        /// large becomes infinity, NaN stays NaN (quiet).</summary>
        public static ushort FromSingle(float value)
        {
            uint b = FloatBits.Of(value);
            if (float.IsNaN(value)) return (ushort)((b >> 16) | 0x40);
            // Adding 0x7fff plus the kept lowest bit rounds to nearest even; a carry out of the
            // largest finite value makes infinity.
            return (ushort)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
        }

        /// <summary>The bfloat16 value of <paramref name="bits"/> as a float (exact).</summary>
        public static float ToSingle(ushort bits) { return FloatBits.From((uint)bits << 16); }

        /// <summary>Whether <paramref name="bits"/> is a bfloat16 NaN.</summary>
        public static bool IsNaN(ushort bits) { return (bits & 0x7fff) > 0x7f80; }

        /// <summary><see cref="FromSingle"/> of each value.</summary>
        public static ushort[] FromSingles(float[] values)
        {
            if (values == null) throw new ArgumentNullException("values");
            return Array.ConvertAll(values, FromSingle);
        }

        /// <summary><see cref="ToSingle"/> of each value.</summary>
        public static float[] ToSingles(ushort[] bits)
        {
            if (bits == null) throw new ArgumentNullException("bits");
            return Array.ConvertAll(bits, ToSingle);
        }
    }

    /// <summary>The bits of a float without unsafe code (BitConverter.SingleToInt32Bits is not
    /// in mono's class library).</summary>
    [StructLayout(LayoutKind.Explicit)]
    internal struct FloatBits
    {
        [FieldOffset(0)] private float f;
        [FieldOffset(0)] private uint u;

        internal static uint Of(float value) { var x = new FloatBits { f = value }; return x.u; }
        internal static float From(uint bits) { var x = new FloatBits { u = bits }; return x.f; }
    }
}
