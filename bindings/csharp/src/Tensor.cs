using System;
using System.Collections.Generic;

namespace ShapePoly
{
    /// <summary>A traced tensor (a borrowed <c>const shp_tensor_t*</c>): a dtype and a
    /// symbolic shape, owned by its <see cref="Scope"/>, which this struct keeps alive. Every
    /// operation infers its result shape symbolically and throws ShapePolyException
    /// (ShapeMismatch, Inconclusive, DTypeMismatch, InvalidArgument, ScopeMismatch) when it
    /// cannot. Operators: <c>+ - * / %</c> (add, sub, mul, div, rem), <c>&amp; | ^</c> (and,
    /// or, xor), unary <c>-</c> (neg).</summary>
    public readonly partial struct Tensor : IEquatable<Tensor>
    {
        private readonly IntPtr h;
        private readonly Scope owner;

        internal Tensor(IntPtr h, Scope owner) { this.h = h; this.owner = owner; }

        /// <summary>The scope this tensor belongs to.</summary>
        public Scope Scope { get { return owner; } }

        internal Scope Owner { get { return owner; } }

        internal IntPtr Ptr
        {
            get
            {
                if (owner == null) throw new InvalidOperationException("default(Tensor) is not a tensor");
                owner.ThrowIfDisposed();
                return h;
            }
        }

        internal static IntPtr[] Unwrap(IList<Tensor> ts)
        {
            var r = new IntPtr[ts.Count];
            for (int i = 0; i < r.Length; i++) r[i] = ts[i].Ptr;
            return r;
        }

        internal static void KeepAlive(IList<Tensor> ts) { foreach (var t in ts) GC.KeepAlive(t.owner); }

        private Tensor Result(IntPtr err, IntPtr r)
        {
            ShapePolyException.Check(err);
            GC.KeepAlive(owner);
            return new Tensor(r, owner);
        }

        // ---- Properties

        /// <summary>The element type.</summary>
        public DType DType
        {
            get { var d = (DType)NativeMethods.shp_tensor_dtype(Ptr); GC.KeepAlive(owner); return d; }
        }

        /// <summary>The symbolic shape (dims of the tensor's scope).</summary>
        public Dim[] Shape
        {
            get
            {
                var p = Ptr;
                UIntPtr rank;
                ShapePolyException.Check(NativeMethods.shp_tensor_shape(p, null, UIntPtr.Zero, out rank));
                var raw = new IntPtr[Sizes.I(rank)];
                ShapePolyException.Check(NativeMethods.shp_tensor_shape(p, raw, Sizes.U(raw.Length), out rank));
                GC.KeepAlive(owner);
                return Dim.Wrap(raw, owner);
            }
        }

        public int Rank { get { return Shape.Length; } }

        /// <summary>"f32[batch, 10]".</summary>
        public override string ToString()
        {
            if (owner == null) return "<default Tensor>";
            return DType.ToString().ToLowerInvariant() + "[" + string.Join(", ", Array.ConvertAll(Shape, d => d.ToString())) + "]";
        }

        public bool Equals(Tensor other) { return h == other.h && ReferenceEquals(owner, other.owner); }
        public override bool Equals(object obj) { return obj is Tensor && Equals((Tensor)obj); }
        public override int GetHashCode() { return h.GetHashCode(); }

        // ---- Elementwise

        /// <summary>Elementwise <c>op(this)</c>.</summary>
        public Tensor Unary(UnaryOp op) { IntPtr r; return Result(NativeMethods.shp_tensor_unary((int)op, Ptr, out r), r); }
        public Tensor Neg() { return Unary(UnaryOp.Neg); }
        public Tensor Abs() { return Unary(UnaryOp.Abs); }
        public Tensor Exp() { return Unary(UnaryOp.Exp); }
        public Tensor Log() { return Unary(UnaryOp.Log); }
        public Tensor Log1p() { return Unary(UnaryOp.Log1p); }
        public Tensor Expm1() { return Unary(UnaryOp.Expm1); }
        public Tensor Sqrt() { return Unary(UnaryOp.Sqrt); }
        public Tensor Rsqrt() { return Unary(UnaryOp.Rsqrt); }
        public Tensor Sin() { return Unary(UnaryOp.Sin); }
        public Tensor Cos() { return Unary(UnaryOp.Cos); }
        public Tensor Tanh() { return Unary(UnaryOp.Tanh); }
        public Tensor Logistic() { return Unary(UnaryOp.Logistic); }
        public Tensor Floor() { return Unary(UnaryOp.Floor); }
        public Tensor Ceil() { return Unary(UnaryOp.Ceil); }
        public Tensor Round() { return Unary(UnaryOp.Round); }
        public Tensor Sign() { return Unary(UnaryOp.Sign); }
        public Tensor Not() { return Unary(UnaryOp.Not); }
        public Tensor Erf() { return Unary(UnaryOp.Erf); }
        public Tensor Tan() { return Unary(UnaryOp.Tan); }
        public Tensor Sinh() { return Unary(UnaryOp.Sinh); }
        public Tensor Cosh() { return Unary(UnaryOp.Cosh); }
        public Tensor Asin() { return Unary(UnaryOp.Asin); }
        public Tensor Acos() { return Unary(UnaryOp.Acos); }
        public Tensor Atan() { return Unary(UnaryOp.Atan); }
        public Tensor Asinh() { return Unary(UnaryOp.Asinh); }
        public Tensor Acosh() { return Unary(UnaryOp.Acosh); }
        public Tensor Atanh() { return Unary(UnaryOp.Atanh); }

        /// <summary>Elementwise <c>this op other</c> with NumPy broadcasting (same dtypes).</summary>
        public Tensor Binary(BinaryOp op, Tensor other)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_binary((int)op, Ptr, other.Ptr, out r);
            GC.KeepAlive(other.owner);
            return Result(err, r);
        }
        public Tensor Add(Tensor o) { return Binary(BinaryOp.Add, o); }
        public Tensor Sub(Tensor o) { return Binary(BinaryOp.Sub, o); }
        public Tensor Mul(Tensor o) { return Binary(BinaryOp.Mul, o); }
        public Tensor Div(Tensor o) { return Binary(BinaryOp.Div, o); }
        public Tensor Pow(Tensor o) { return Binary(BinaryOp.Pow, o); }
        public Tensor Maximum(Tensor o) { return Binary(BinaryOp.Max, o); }
        public Tensor Minimum(Tensor o) { return Binary(BinaryOp.Min, o); }
        public Tensor Rem(Tensor o) { return Binary(BinaryOp.Rem, o); }
        public Tensor And(Tensor o) { return Binary(BinaryOp.And, o); }
        public Tensor Or(Tensor o) { return Binary(BinaryOp.Or, o); }
        public Tensor Xor(Tensor o) { return Binary(BinaryOp.Xor, o); }

        public static Tensor operator +(Tensor a, Tensor b) { return a.Binary(BinaryOp.Add, b); }
        public static Tensor operator -(Tensor a, Tensor b) { return a.Binary(BinaryOp.Sub, b); }
        public static Tensor operator *(Tensor a, Tensor b) { return a.Binary(BinaryOp.Mul, b); }
        public static Tensor operator /(Tensor a, Tensor b) { return a.Binary(BinaryOp.Div, b); }
        public static Tensor operator %(Tensor a, Tensor b) { return a.Binary(BinaryOp.Rem, b); }
        public static Tensor operator &(Tensor a, Tensor b) { return a.Binary(BinaryOp.And, b); }
        public static Tensor operator |(Tensor a, Tensor b) { return a.Binary(BinaryOp.Or, b); }
        public static Tensor operator ^(Tensor a, Tensor b) { return a.Binary(BinaryOp.Xor, b); }
        public static Tensor operator -(Tensor a) { return a.Unary(UnaryOp.Neg); }

        /// <summary>Elementwise comparison with broadcasting; the result is Bool.</summary>
        public Tensor Compare(CmpOp op, Tensor other)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_compare(Ptr, (int)op, other.Ptr, out r);
            GC.KeepAlive(other.owner);
            return Result(err, r);
        }
        public Tensor Equal(Tensor o) { return Compare(CmpOp.Eq, o); }
        public Tensor NotEqual(Tensor o) { return Compare(CmpOp.Ne, o); }
        public Tensor Less(Tensor o) { return Compare(CmpOp.Lt, o); }
        public Tensor LessEqual(Tensor o) { return Compare(CmpOp.Le, o); }
        public Tensor Greater(Tensor o) { return Compare(CmpOp.Gt, o); }
        public Tensor GreaterEqual(Tensor o) { return Compare(CmpOp.Ge, o); }

        /// <summary><c>pred ? onTrue : onFalse</c> elementwise (pred is Bool; broadcasting).</summary>
        public static Tensor Select(Tensor pred, Tensor onTrue, Tensor onFalse)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_select(pred.Ptr, onTrue.Ptr, onFalse.Ptr, out r);
            GC.KeepAlive(onTrue.owner);
            GC.KeepAlive(onFalse.owner);
            return pred.Result(err, r);
        }

        /// <summary>Converts the elements to <paramref name="dtype"/>.</summary>
        public Tensor Convert(DType dtype) { IntPtr r; return Result(NativeMethods.shp_tensor_convert(Ptr, (int)dtype, out r), r); }

        // ---- Shape operations

        /// <summary>NumPy broadcast_to.</summary>
        public Tensor BroadcastTo(params Dim[] dims)
        {
            var raw = Dim.Unwrap(dims);
            IntPtr r;
            var err = NativeMethods.shp_tensor_broadcast_to(Ptr, raw, Sizes.U(raw.Length), out r);
            Dim.KeepAlive(dims);
            return Result(err, r);
        }

        /// <summary>Reshape (row-major); one entry may be null: that dimension is inferred.</summary>
        public Tensor Reshape(params Dim?[] dims)
        {
            var raw = Dim.Unwrap(dims) ?? new IntPtr[0];
            IntPtr r;
            var err = NativeMethods.shp_tensor_reshape(Ptr, raw, Sizes.U(raw.Length), out r);
            Dim.KeepAlive(dims);
            return Result(err, r);
        }

        /// <summary>Result axis i is axis permutation[i].</summary>
        public Tensor Transpose(params long[] permutation)
        {
            permutation = permutation ?? new long[0];
            IntPtr r;
            return Result(NativeMethods.shp_tensor_transpose(Ptr, permutation, Sizes.U(permutation.Length), out r), r);
        }

        /// <summary>Concatenates tensors of one dtype and rank along <paramref name="axis"/>.</summary>
        public static Tensor Concatenate(long axis, params Tensor[] xs)
        {
            if (xs == null || xs.Length == 0) throw new ArgumentException("Concatenate needs at least one tensor");
            var raw = Unwrap(xs);
            IntPtr r;
            var err = NativeMethods.shp_tensor_concatenate(raw, Sizes.U(raw.Length), axis, out r);
            KeepAlive(xs);
            return xs[0].Result(err, r);
        }

        /// <summary>this[start:limit:strides] on every axis. Any argument may be null (0,
        /// the dimension, 1), and start/limit entries may be null (the same per axis).</summary>
        public Tensor Slice(Dim?[] start, Dim?[] limit, long[] strides = null)
        {
            int rank = start != null ? start.Length : limit != null ? limit.Length : strides != null ? strides.Length : Shape.Length;
            var s = Dim.Unwrap(start);
            var l = Dim.Unwrap(limit);
            IntPtr r;
            var err = NativeMethods.shp_tensor_slice(Ptr, s, l, strides, Sizes.U(rank), out r);
            Dim.KeepAlive(start);
            Dim.KeepAlive(limit);
            return Result(err, r);
        }

        /// <summary>Pads axis i with low[i] elements before and high[i] after, filled with value.</summary>
        public Tensor Pad(Dim[] low, Dim[] high, double value = 0)
        {
            if (low == null || high == null) throw new ArgumentNullException(low == null ? "low" : "high");
            if (low.Length != high.Length) throw new ArgumentException("low and high differ in length");
            var lo = Dim.Unwrap(low);
            var hi = Dim.Unwrap(high);
            IntPtr r;
            var err = NativeMethods.shp_tensor_pad(Ptr, lo, hi, Sizes.U(lo.Length), value, out r);
            Dim.KeepAlive(low);
            Dim.KeepAlive(high);
            return Result(err, r);
        }

        // ---- Reductions and other operations

        /// <summary>Reduces over <paramref name="axes"/> (empty or null: every axis).</summary>
        public Tensor Reduce(ReduceOp op, long[] axes = null, bool keepdims = false)
        {
            axes = axes ?? new long[0];
            IntPtr r;
            return Result(NativeMethods.shp_tensor_reduce((int)op, Ptr, axes, Sizes.U(axes.Length), keepdims, out r), r);
        }
        public Tensor Sum(long[] axes = null, bool keepdims = false) { return Reduce(ReduceOp.Sum, axes, keepdims); }
        public Tensor Mean(long[] axes = null, bool keepdims = false) { return Reduce(ReduceOp.Mean, axes, keepdims); }
        public Tensor ReduceMax(long[] axes = null, bool keepdims = false) { return Reduce(ReduceOp.Max, axes, keepdims); }
        public Tensor ReduceMin(long[] axes = null, bool keepdims = false) { return Reduce(ReduceOp.Min, axes, keepdims); }
        public Tensor Prod(long[] axes = null, bool keepdims = false) { return Reduce(ReduceOp.Prod, axes, keepdims); }

        /// <summary>XLA dot_general: batch axes, then free axes of this, then free axes of other.</summary>
        public Tensor DotGeneral(Tensor other, long[] lhsBatch, long[] rhsBatch, long[] lhsContracting, long[] rhsContracting)
        {
            lhsBatch = lhsBatch ?? new long[0];
            rhsBatch = rhsBatch ?? new long[0];
            lhsContracting = lhsContracting ?? new long[0];
            rhsContracting = rhsContracting ?? new long[0];
            if (lhsBatch.Length != rhsBatch.Length) throw new ArgumentException("lhsBatch and rhsBatch differ in length");
            if (lhsContracting.Length != rhsContracting.Length) throw new ArgumentException("lhsContracting and rhsContracting differ in length");
            IntPtr r;
            var err = NativeMethods.shp_tensor_dot_general(Ptr, other.Ptr, lhsBatch, rhsBatch, Sizes.U(lhsBatch.Length),
                lhsContracting, rhsContracting, Sizes.U(lhsContracting.Length), out r);
            GC.KeepAlive(other.owner);
            return Result(err, r);
        }

        // ---- Neural-network building blocks (ONNX semantics; floating-point unless said)

        // A null array stays null (the C API's "default"), unlike Dim.Unwrap's empty array.
        private static IntPtr[] OptionalDims(Dim[] dims) { return dims == null ? null : Dim.Unwrap(dims); }

        // Checks an optional per-axis array's length before the call, naming the argument.
        private static void CheckLength(long[] values, int expected, string name)
        {
            if (values != null && values.Length != expected)
                throw new ArgumentException(name + " has " + values.Length + " entries, expected " + expected, name);
        }

        /// <summary>ONNX LeakyRelu: x &gt;= 0 ? x : alpha * x (alpha finite).</summary>
        public Tensor LeakyRelu(double alpha = 0.01) { IntPtr r; return Result(NativeMethods.shp_tensor_leaky_relu(Ptr, alpha, out r), r); }

        /// <summary>ONNX PRelu: x &gt;= 0 ? x : slope * x; <paramref name="slope"/> broadcasts
        /// to this tensor's shape (never the reverse).</summary>
        public Tensor PRelu(Tensor slope)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_prelu(Ptr, slope.Ptr, out r);
            GC.KeepAlive(slope.owner);
            return Result(err, r);
        }

        /// <summary>ONNX Elu: x &gt;= 0 ? x : alpha * (e^x - 1) (alpha finite).</summary>
        public Tensor Elu(double alpha = 1.0) { IntPtr r; return Result(NativeMethods.shp_tensor_elu(Ptr, alpha, out r), r); }

        /// <summary>ONNX Selu: gamma * (x &gt; 0 ? x : alpha * (e^x - 1)), with ONNX's defaults.</summary>
        public Tensor Selu(double alpha = 1.67326319217681884765625, double gamma = 1.05070102214813232421875)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_selu(Ptr, alpha, gamma, out r), r);
        }

        /// <summary>ONNX Softplus, log(1 + e^x), computed in a stable form.</summary>
        public Tensor Softplus() { IntPtr r; return Result(NativeMethods.shp_tensor_softplus(Ptr, out r), r); }

        /// <summary>ONNX Softsign: x / (1 + |x|).</summary>
        public Tensor Softsign() { IntPtr r; return Result(NativeMethods.shp_tensor_softsign(Ptr, out r), r); }

        /// <summary>ONNX Clip: min(max(x, min), max) for every numeric dtype; infinite bounds
        /// mean none (NaN bounds are errors); integer x rounds the bounds inward.</summary>
        public Tensor Clip(double min = double.NegativeInfinity, double max = double.PositiveInfinity)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_clip(Ptr, min, max, out r), r);
        }

        /// <summary>ONNX HardSigmoid: max(0, min(1, alpha * x + beta)).</summary>
        public Tensor HardSigmoid(double alpha = 0.2, double beta = 0.5)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_hard_sigmoid(Ptr, alpha, beta, out r), r);
        }

        /// <summary>ONNX LogSoftmax along one axis (negative counts from the end).</summary>
        public Tensor LogSoftmax(long axis) { IntPtr r; return Result(NativeMethods.shp_tensor_log_softmax(Ptr, axis, out r), r); }

        /// <summary>ONNX BatchNormalization, inference form: this is [N, C, ...] (rank &gt;= 2);
        /// scale, bias, mean and variance are each [C]; epsilon finite and &gt;= 0.</summary>
        public Tensor BatchNorm(Tensor scale, Tensor bias, Tensor mean, Tensor variance, double epsilon = 1e-5)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_batch_norm(Ptr, scale.Ptr, bias.Ptr, mean.Ptr, variance.Ptr, epsilon, out r);
            GC.KeepAlive(scale.owner);
            GC.KeepAlive(bias.owner);
            GC.KeepAlive(mean.owner);
            GC.KeepAlive(variance.owner);
            return Result(err, r);
        }

        /// <summary>ONNX LRN across the channels of [N, C, ...] (rank &gt;= 2, size &gt;= 1):
        /// x * (bias + alpha / size * s)^-beta, s the sum of squares over the window of channels.</summary>
        public Tensor Lrn(long size, double alpha = 1e-4, double beta = 0.75, double bias = 1.0)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_lrn(Ptr, size, alpha, beta, bias, out r), r);
        }

        /// <summary>Pads axis i with low[i] before and high[i] after (any dtype) in
        /// <paramref name="mode"/>: Constant fills with <paramref name="value"/>, Reflect mirrors
        /// without the edge (every non-zero pad &lt;= dim - 1), Edge repeats the edge (dim &gt;= 1).
        /// A need the engine cannot decide becomes a run-time shape assertion.</summary>
        public Tensor Pad(Dim[] low, Dim[] high, PadMode mode, double value = 0)
        {
            if (low == null || high == null) throw new ArgumentNullException(low == null ? "low" : "high");
            if (low.Length != high.Length) throw new ArgumentException("low and high differ in length");
            var lo = Dim.Unwrap(low);
            var hi = Dim.Unwrap(high);
            IntPtr r;
            var err = NativeMethods.shp_tensor_pad_mode(Ptr, lo, hi, Sizes.U(lo.Length), (int)mode, value, out r);
            Dim.KeepAlive(low);
            Dim.KeepAlive(high);
            return Result(err, r);
        }

        /// <summary>ONNX DepthToSpace: [N, C, H, W] -&gt; [N, C / b^2, H * b, W * b] (any dtype),
        /// b = blocksize &gt;= 1; C must be provably divisible by b^2.</summary>
        public Tensor DepthToSpace(long blocksize, DepthToSpaceMode mode = DepthToSpaceMode.Dcr)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_depth_to_space(Ptr, blocksize, (int)mode, out r), r);
        }

        /// <summary>ONNX SpaceToDepth (the inverse of DCR DepthToSpace): [N, C, H, W] -&gt;
        /// [N, C * b^2, H / b, W / b]; H and W must be provably divisible by b.</summary>
        public Tensor SpaceToDepth(long blocksize)
        {
            IntPtr r;
            return Result(NativeMethods.shp_tensor_space_to_depth(Ptr, blocksize, out r), r);
        }

        /// <summary>ONNX Conv (NCHW, 1 to 3 spatial axes; f32, f64): this is [N, C, *in],
        /// <paramref name="w"/> [O, C / groups, *kernel], <paramref name="bias"/> null or [O];
        /// the result is [N, O, *out], out a dim expression. strides and dilations: null (all 1)
        /// or one entry per spatial axis; pads: null (all 0) or the beginnings then the ends
        /// (ONNX order), only with <see cref="AutoPad.NotSet"/>. groups divides C and O.</summary>
        public Tensor Conv(Tensor w, Tensor? bias = null, long[] strides = null, long[] dilations = null, long[] pads = null,
            AutoPad autoPad = AutoPad.NotSet, long groups = 1)
        {
            int n = ConvSpatialAxes();
            CheckLength(strides, n, "strides");
            CheckLength(dilations, n, "dilations");
            CheckLength(pads, 2 * n, "pads");
            IntPtr r;
            var err = NativeMethods.shp_tensor_conv(Ptr, w.Ptr, bias.HasValue ? bias.Value.Ptr : IntPtr.Zero, Sizes.U(n), strides,
                dilations, pads, (int)autoPad, groups, out r);
            GC.KeepAlive(w.owner);
            if (bias.HasValue) GC.KeepAlive(bias.Value.owner);
            return Result(err, r);
        }

        /// <summary>ONNX ConvTranspose: this is [N, C, *in], <paramref name="w"/>
        /// [C, O / groups, *kernel] (ONNX layout) -&gt; [N, O, *out], out = (in - 1) * stride +
        /// (kernel - 1) * dilation + 1 - pads + output_padding. outputPadding: null (all 0) or
        /// one entry per spatial axis. Other arguments as <see cref="Conv"/>.</summary>
        public Tensor ConvTranspose(Tensor w, Tensor? bias = null, long[] strides = null, long[] dilations = null, long[] pads = null,
            long[] outputPadding = null, AutoPad autoPad = AutoPad.NotSet, long groups = 1)
        {
            int n = ConvSpatialAxes();
            CheckLength(strides, n, "strides");
            CheckLength(dilations, n, "dilations");
            CheckLength(pads, 2 * n, "pads");
            CheckLength(outputPadding, n, "outputPadding");
            IntPtr r;
            var err = NativeMethods.shp_tensor_conv_transpose(Ptr, w.Ptr, bias.HasValue ? bias.Value.Ptr : IntPtr.Zero, Sizes.U(n),
                strides, dilations, pads, outputPadding, (int)autoPad, groups, out r);
            GC.KeepAlive(w.owner);
            if (bias.HasValue) GC.KeepAlive(bias.Value.owner);
            return Result(err, r);
        }

        // The number of spatial axes of a conv: x's rank less 2 (the C API checks w's rank
        // against it and reports a mismatch naming the argument).
        private int ConvSpatialAxes()
        {
            int rank = Shape.Length;
            if (rank < 3) throw new ArgumentException("x has rank " + rank + ", expected 3 to 5 ([N, C, *spatial])", "x");
            return rank - 2;
        }

        /// <summary>XLA ReduceWindow: <paramref name="op"/> Sum, Max or Min over a sliding
        /// window on every axis (f32, f64, i32, i64). window has one entry per axis; strides,
        /// windowDilation and baseDilation null (all 1) or one entry &gt;= 1 per axis; padLow and
        /// padHigh null (all 0) or one dim per axis (negative crops). Holes and padding hold the
        /// reduction's identity.</summary>
        public Tensor ReduceWindow(ReduceOp op, long[] window, long[] strides = null, long[] windowDilation = null,
            long[] baseDilation = null, Dim[] padLow = null, Dim[] padHigh = null)
        {
            if (window == null) throw new ArgumentNullException("window");
            int n = window.Length;
            CheckLength(strides, n, "strides");
            CheckLength(windowDilation, n, "windowDilation");
            CheckLength(baseDilation, n, "baseDilation");
            if (padLow != null && padLow.Length != n) throw new ArgumentException("padLow has " + padLow.Length + " entries, expected " + n, "padLow");
            if (padHigh != null && padHigh.Length != n) throw new ArgumentException("padHigh has " + padHigh.Length + " entries, expected " + n, "padHigh");
            IntPtr r;
            var err = NativeMethods.shp_tensor_reduce_window((int)op, Ptr, window, strides, windowDilation, baseDilation,
                OptionalDims(padLow), OptionalDims(padHigh), Sizes.U(n), out r);
            Dim.KeepAlive(padLow);
            Dim.KeepAlive(padHigh);
            return Result(err, r);
        }

        /// <summary>ONNX MaxPool on [N, C, *spatial] (f32, f64, i32, i64): kernelShape one entry
        /// &gt;= 1 per spatial axis; strides, dilations null (all 1) or one per axis; pads null
        /// (all 0) or the beginnings then the ends, each smaller than the kernel extent, only with
        /// <see cref="AutoPad.NotSet"/>. ceilMode rounds the output size up (as PyTorch).</summary>
        public Tensor MaxPool(long[] kernelShape, long[] strides = null, long[] dilations = null, long[] pads = null,
            AutoPad autoPad = AutoPad.NotSet, bool ceilMode = false)
        {
            if (kernelShape == null) throw new ArgumentNullException("kernelShape");
            int n = kernelShape.Length;
            CheckLength(strides, n, "strides");
            CheckLength(dilations, n, "dilations");
            CheckLength(pads, 2 * n, "pads");
            IntPtr r;
            var err = NativeMethods.shp_tensor_max_pool(Ptr, Sizes.U(n), kernelShape, strides, dilations, pads, (int)autoPad, ceilMode, out r);
            return Result(err, r);
        }

        /// <summary>ONNX AveragePool on a floating-point [N, C, *spatial]: window sums divided by
        /// the input elements each window counts (with countIncludePad, the pads too; the
        /// ceil-mode overhang never counts). Other arguments as <see cref="MaxPool"/>.</summary>
        public Tensor AvgPool(long[] kernelShape, long[] strides = null, long[] dilations = null, long[] pads = null,
            AutoPad autoPad = AutoPad.NotSet, bool ceilMode = false, bool countIncludePad = false)
        {
            if (kernelShape == null) throw new ArgumentNullException("kernelShape");
            int n = kernelShape.Length;
            CheckLength(strides, n, "strides");
            CheckLength(dilations, n, "dilations");
            CheckLength(pads, 2 * n, "pads");
            IntPtr r;
            var err = NativeMethods.shp_tensor_avg_pool(Ptr, Sizes.U(n), kernelShape, strides, dilations, pads, (int)autoPad, ceilMode,
                countIncludePad, out r);
            return Result(err, r);
        }

        /// <summary>ONNX GlobalAveragePool: the mean over the spatial axes of [N, C, *spatial]
        /// (rank &gt;= 3, floating point), kept as size 1.</summary>
        public Tensor GlobalAvgPool() { IntPtr r; return Result(NativeMethods.shp_tensor_global_avg_pool(Ptr, out r), r); }

        /// <summary>ONNX GlobalMaxPool: the max over the spatial axes (rank &gt;= 3; f32, f64,
        /// i32, i64), kept as size 1.</summary>
        public Tensor GlobalMaxPool() { IntPtr r; return Result(NativeMethods.shp_tensor_global_max_pool(Ptr, out r), r); }

        // ---- Data-dependent sizes: each op makes a new unbacked variable (u0, u1, ...) whose
        // bounds are facts; comparisons over it are decided from those facts only, so code that
        // branches on it states what it needs with Scope.Check.

        /// <summary>np.argwhere(this): the indices of the nonzero elements (any dtype and rank;
        /// floats: -0.0 is zero and NaN is nonzero; bool: true) as an i64 tensor of shape
        /// [u, rank] in row-major order, u a new unbacked variable with 0 &lt;= u &lt;= numel
        /// (<c>Shape[0]</c>).</summary>
        public Tensor Nonzero() { IntPtr r; return Result(NativeMethods.shp_tensor_nonzero(Ptr, out r), r); }

        /// <summary>this[mask] along <paramref name="axis"/>: the bool <paramref name="mask"/>
        /// (rank k &gt;= 1) covers axes axis..axis+k-1, whose shape it must provably equal; they
        /// are replaced by one axis of length u (a new unbacked variable, 0 &lt;= u &lt;= numel
        /// of the mask) holding the selected slices in row-major order. A negative axis counts
        /// from the end.</summary>
        public Tensor BooleanMask(Tensor mask, long axis = 0)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_boolean_mask(Ptr, mask.Ptr, axis, out r);
            GC.KeepAlive(mask.owner);
            return Result(err, r);
        }

        /// <summary>A dim whose value is this scalar i64 tensor, computed by the program (like
        /// PyTorch's <c>.item()</c> used as a size): a new unbacked variable named
        /// <paramref name="name"/> (null or "": u0, u1, ...) with the range [min, max]
        /// (0 &lt;= min &lt;= max; long.MaxValue: unbounded). The engine uses the range as facts;
        /// a run whose value falls outside fails with ConstraintViolation.</summary>
        public Dim SizeFromValue(string name = null, long min = 0, long max = long.MaxValue)
        {
            IntPtr d;
            ShapePolyException.Check(NativeMethods.shp_tensor_size_from_value(Ptr, Utf8.Encode(name), min, max, out d));
            GC.KeepAlive(owner);
            return new Dim(d, owner);
        }

        /// <summary>ONNX TopK (torch.topk): the values and the I64 indices of the
        /// <paramref name="k"/> largest (or smallest) elements along <paramref name="axis"/>
        /// (negative: from the end), best first; equal values by the lower index; NaN is larger
        /// than +inf. k is a dim with 0 &lt;= k &lt;= the axis's size, asserted at run time when
        /// not provable (a data-dependent k must be checked first); sorted false gives the
        /// sorted order too. (<c>shp_tensor_top_k</c>)</summary>
        public (Tensor Values, Tensor Indices) TopK(Dim k, long axis = -1, bool largest = true,
                                                    bool sorted = true)
        {
            IntPtr v, i;
            ShapePolyException.Check(NativeMethods.shp_tensor_top_k(Ptr, k.Ptr, axis, largest, sorted, out v, out i));
            GC.KeepAlive(owner);
            GC.KeepAlive(k);
            return (new Tensor(v, owner), new Tensor(i, owner));
        }

    }
}
