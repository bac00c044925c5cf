using System;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    /// <summary>An n-d array for the runtime: a C# array holding the elements in row-major
    /// order, plus a shape. The element types: float[] (F32), double[] (F64), int[] (I32),
    /// long[] (I64), bool[] (Bool), sbyte[] (I8), byte[] (U8), short[] (I16), ushort[] (U16),
    /// uint[] (U32), ulong[] (U64), and for F16 and BF16 a ushort[] of their bits, made with
    /// <see cref="FromF16Bits"/> / <see cref="FromBF16Bits"/> (see <see cref="F16Bits"/> and
    /// <see cref="BF16Bits"/>). The data array is not copied: runs pin it and pass it to the
    /// library without a copy (shp_array_wrap), for the duration of the call only. Run outputs
    /// are new NdArrays owning new C# arrays.</summary>
    public sealed class NdArray
    {
        private readonly long[] shape;

        /// <summary>The element type.</summary>
        public DType DType { get; }

        /// <summary>The underlying C# array (float[], double[], int[], long[], bool[], sbyte[],
        /// byte[], short[], ushort[], uint[] or ulong[]; ushort[] bits for F16 and BF16).</summary>
        public Array Data { get; }

        /// <summary>A copy of the shape.</summary>
        public long[] Shape { get { return (long[])shape.Clone(); } }

        public int Rank { get { return shape.Length; } }

        /// <summary>Number of elements of <see cref="Data"/>.</summary>
        public long Length { get { return Data.LongLength; } }

        private NdArray(DType dtype, Array data, long[] shape)
        {
            if (data == null) throw new ArgumentNullException("data");
            var copy = shape == null ? new long[0] : (long[])shape.Clone();
            long need = ElementCount(copy, "NdArray");
            if (data.LongLength != need)
                throw new ShapePolyException(ShapePolyCode.InvalidArgument, "NdArray: " +
                    data.LongLength + " elements given, shape " + FormatShape(copy) + " needs " +
                    need);
            DType = dtype;
            Data = data;
            this.shape = copy;
        }

        /// <summary>The elements of an array of <paramref name="shape"/> (a ShapePolyException,
        /// InvalidArgument or Overflow, for a negative or too large shape).</summary>
        internal static long ElementCount(long[] shape, string what)
        {
            long n = 1;
            for (int i = 0; i < shape.Length; i++)
            {
                if (shape[i] < 0)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument, what +
                        ": dimension " + i + " of shape " + FormatShape(shape) + " is negative");
                try { n = checked(n * shape[i]); }
                catch (OverflowException)
                {
                    throw new ShapePolyException(ShapePolyCode.Overflow, what +
                        ": the number of elements of shape " + FormatShape(shape) + " overflows");
                }
            }
            return n;
        }

        /// <summary>A concrete shape in the library's notation: (2, 4), (3,) and ().</summary>
        internal static string FormatShape(long[] shape)
        {
            return "(" + string.Join(", ", shape) + (shape.Length == 1 ? ",)" : ")");
        }

        /// <summary>An array over <paramref name="data"/> (not copied) in row-major order;
        /// no shape is rank 0. Throws a ShapePolyException (InvalidArgument) unless the data
        /// holds exactly the shape's number of elements: "6 elements given, shape (2, 4) needs
        /// 8".</summary>
        public NdArray(float[] data, params long[] shape) : this(DType.F32, data, shape) { }
        public NdArray(double[] data, params long[] shape) : this(DType.F64, data, shape) { }
        public NdArray(int[] data, params long[] shape) : this(DType.I32, data, shape) { }
        public NdArray(long[] data, params long[] shape) : this(DType.I64, data, shape) { }
        public NdArray(bool[] data, params long[] shape) : this(DType.Bool, data, shape) { }
        public NdArray(sbyte[] data, params long[] shape) : this(DType.I8, data, shape) { }
        public NdArray(byte[] data, params long[] shape) : this(DType.U8, data, shape) { }
        public NdArray(short[] data, params long[] shape) : this(DType.I16, data, shape) { }
        /// <summary>A U16 array. For the bits of 16-bit floats use <see cref="FromF16Bits"/> or
        /// <see cref="FromBF16Bits"/>.</summary>
        public NdArray(ushort[] data, params long[] shape) : this(DType.U16, data, shape) { }
        public NdArray(uint[] data, params long[] shape) : this(DType.U32, data, shape) { }
        public NdArray(ulong[] data, params long[] shape) : this(DType.U64, data, shape) { }

        /// <summary>An F16 array over IEEE binary16 <paramref name="bits"/> (not copied), e.g.
        /// from <see cref="F16Bits.FromSingles"/>.</summary>
        public static NdArray FromF16Bits(ushort[] bits, params long[] shape) { return new NdArray(DType.F16, bits, shape); }

        /// <summary>A BF16 array over bfloat16 <paramref name="bits"/> (not copied), e.g. from
        /// <see cref="BF16Bits.FromSingles"/>.</summary>
        public static NdArray FromBF16Bits(ushort[] bits, params long[] shape) { return new NdArray(DType.BF16, bits, shape); }

        /// <summary>A rank-0 i64 array: the value of a dimension input.</summary>
        public static NdArray Scalar(long value) { return new NdArray(new[] { value }); }

        /// <summary>A zero-filled array (e.g. an output for Runtime.RunInto).</summary>
        public static NdArray Zeros(DType dtype, params long[] shape)
        {
            long n = 1;
            foreach (var d in shape ?? new long[0])
            {
                if (d < 0) throw new ArgumentException("negative dimension " + d);
                n = checked(n * d);
            }
            return new NdArray(dtype, NewData(dtype, n), shape);
        }

        private static Array NewData(DType dtype, long n)
        {
            switch (dtype)
            {
                case DType.F32: return new float[n];
                case DType.F64: return new double[n];
                case DType.I32: return new int[n];
                case DType.I64: return new long[n];
                case DType.Bool: return new bool[n];
                case DType.F16: case DType.BF16: case DType.U16: return new ushort[n];
                case DType.I8: return new sbyte[n];
                case DType.U8: return new byte[n];
                case DType.I16: return new short[n];
                case DType.U32: return new uint[n];
                case DType.U64: return new ulong[n];
                default: throw new ArgumentException("unknown dtype " + (int)dtype);
            }
        }

        /// <summary>Bytes per element of <paramref name="dtype"/>; 0 for an unknown dtype.</summary>
        internal static int ElementSize(DType dtype)
        {
            switch (dtype)
            {
                case DType.Bool: case DType.I8: case DType.U8: return 1;
                case DType.F16: case DType.BF16: case DType.I16: case DType.U16: return 2;
                case DType.F32: case DType.I32: case DType.U32: return 4;
                case DType.F64: case DType.I64: case DType.U64: return 8;
                default: return 0;
            }
        }

        private T Typed<T>(DType want) where T : class
        {
            if (DType != want) throw new InvalidOperationException("the array is " + DType + ", not " + want);
            return (T)(object)Data;
        }

        /// <summary>The data as float[] (no copy); throws InvalidOperationException for another dtype.</summary>
        public float[] AsFloat() { return Typed<float[]>(DType.F32); }
        public double[] AsDouble() { return Typed<double[]>(DType.F64); }
        public int[] AsInt() { return Typed<int[]>(DType.I32); }
        public long[] AsLong() { return Typed<long[]>(DType.I64); }
        public bool[] AsBool() { return Typed<bool[]>(DType.Bool); }
        public sbyte[] AsSByte() { return Typed<sbyte[]>(DType.I8); }
        public byte[] AsByte() { return Typed<byte[]>(DType.U8); }
        public short[] AsShort() { return Typed<short[]>(DType.I16); }
        /// <summary>The data of a U16 array (not F16 or BF16: see <see cref="AsF16Bits"/>).</summary>
        public ushort[] AsUShort() { return Typed<ushort[]>(DType.U16); }
        public uint[] AsUInt() { return Typed<uint[]>(DType.U32); }
        public ulong[] AsULong() { return Typed<ulong[]>(DType.U64); }

        /// <summary>The binary16 bits of an F16 array (no copy; <see cref="F16Bits.ToSingles"/>
        /// converts); throws InvalidOperationException for another dtype.</summary>
        public ushort[] AsF16Bits() { return Typed<ushort[]>(DType.F16); }

        /// <summary>The bfloat16 bits of a BF16 array (no copy; <see cref="BF16Bits.ToSingles"/>
        /// converts); throws InvalidOperationException for another dtype.</summary>
        public ushort[] AsBF16Bits() { return Typed<ushort[]>(DType.BF16); }

        /// <summary>Wraps the pinned data as a borrowed shp_array_t (caller destroys it).</summary>
        internal IntPtr Wrap(Pins pins)
        {
            var p = pins.Add(Data);
            IntPtr arr;
            ShapePolyException.Check(NativeMethods.shp_array_wrap((int)DType, shape, Sizes.U(shape.Length), p,
                Sizes.U(Data.LongLength * ElementSize(DType)), out arr));
            return arr;
        }

        /// <summary>Copies a native array into a new NdArray (the native array is not destroyed).</summary>
        internal static NdArray CopyFrom(IntPtr arr)
        {
            var dtype = (DType)NativeMethods.shp_array_dtype(arr);
            int rank = Sizes.I(NativeMethods.shp_array_rank(arr));
            var shape = new long[rank];
            if (rank > 0) Marshal.Copy(NativeMethods.shp_array_shape(arr), shape, 0, rank);
            long nbytes = (long)NativeMethods.shp_array_nbytes(arr).ToUInt64();
            int size = ElementSize(dtype);
            if (size == 0)
                throw new ShapePolyException(ShapePolyCode.DTypeMismatch, "the library returned an array of dtype " +
                    (int)dtype + ", which this binding does not know");
            long n = nbytes / size;
            var data = NewData(dtype, n);
            var src = NativeMethods.shp_array_data(arr);
            if (n > 0)
            {
                switch (dtype)
                {
                    case DType.F32: Marshal.Copy(src, (float[])data, 0, checked((int)n)); break;
                    case DType.F64: Marshal.Copy(src, (double[])data, 0, checked((int)n)); break;
                    case DType.I32: Marshal.Copy(src, (int[])data, 0, checked((int)n)); break;
                    case DType.I64: Marshal.Copy(src, (long[])data, 0, checked((int)n)); break;
                    case DType.Bool:
                        var bytes = new byte[n];
                        Marshal.Copy(src, bytes, 0, checked((int)n));
                        var bools = (bool[])data;
                        for (long i = 0; i < n; i++) bools[i] = bytes[i] != 0;
                        break;
                    case DType.U8: Marshal.Copy(src, (byte[])data, 0, checked((int)n)); break;
                    case DType.I16: Marshal.Copy(src, (short[])data, 0, checked((int)n)); break;
                    case DType.I8: case DType.U16: case DType.F16: case DType.BF16: case DType.U32: case DType.U64:
                        // sbyte[], ushort[], uint[], ulong[]: Marshal.Copy has no overload for them.
                        var raw = new byte[nbytes];
                        Marshal.Copy(src, raw, 0, checked((int)nbytes));
                        Buffer.BlockCopy(raw, 0, data, 0, checked((int)nbytes));
                        break;
                    default: throw new InvalidOperationException("no copy for dtype " + dtype);
                }
            }
            return new NdArray(dtype, data, shape);
        }

        public override string ToString()
        {
            return "NdArray(" + DType.ToString().ToLowerInvariant() + "[" + string.Join(", ", shape) + "])";
        }
    }
}
