using System;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    /// <summary>An n-d array for the runtime: a C# array (float[], double[], int[], long[]
    /// or bool[]) holding the elements in row-major order, plus a shape. The data array is
    /// not copied: runs pin it and pass it to the library without a copy (shp_array_wrap),
    /// for the duration of the call only. Run outputs are new NdArrays owning new C# arrays.</summary>
    public sealed class NdArray
    {
        private readonly long[] shape;

        /// <summary>The element type.</summary>
        public DType DType { get; }

        /// <summary>The underlying C# array (float[], double[], int[], long[] or bool[]).</summary>
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
                default: throw new ArgumentException("unknown dtype " + (int)dtype);
            }
        }

        internal static int ElementSize(DType dtype)
        {
            switch (dtype)
            {
                case DType.F64: case DType.I64: return 8;
                case DType.Bool: return 1;
                default: return 4;
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
            long n = nbytes / ElementSize(dtype);
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
