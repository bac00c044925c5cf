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
    public readonly struct Tensor : IEquatable<Tensor>
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

        /// <summary>NumPy matmul.</summary>
        public Tensor MatMul(Tensor other)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_matmul(Ptr, other.Ptr, out r);
            GC.KeepAlive(other.owner);
            return Result(err, r);
        }

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

        public Tensor Softmax(long axis) { IntPtr r; return Result(NativeMethods.shp_tensor_softmax(Ptr, axis, out r), r); }
        public Tensor LayerNorm(long axis, double epsilon) { IntPtr r; return Result(NativeMethods.shp_tensor_layer_norm(Ptr, axis, epsilon, out r), r); }
        public Tensor CumSum(long axis) { IntPtr r; return Result(NativeMethods.shp_tensor_cumsum(Ptr, axis, out r), r); }

        /// <summary>np.take(this, indices, axis).</summary>
        public Tensor Take(Tensor indices, long axis)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_take(Ptr, indices.Ptr, axis, out r);
            GC.KeepAlive(indices.owner);
            return Result(err, r);
        }

        /// <summary>np.flip(this, axes): the elements in reverse order along each of
        /// <paramref name="axes"/> (negative axes count from the end; each axis at most once;
        /// none or null: a copy).</summary>
        public Tensor Reverse(params long[] axes)
        {
            axes = axes ?? new long[0];
            IntPtr r;
            return Result(NativeMethods.shp_tensor_reverse(Ptr, axes, Sizes.U(axes.Length), out r), r);
        }

        /// <summary>The transpose of <see cref="Take"/>: np.add.at on a copy of this tensor (the
        /// base) along <paramref name="axis"/>. The result has this (numeric) tensor's shape and
        /// dtype; <paramref name="updates"/> has the shape Take(indices, axis) would have;
        /// repeated indices accumulate in the order of their positions. An index outside
        /// [0, dimension) is an error at run time.</summary>
        public Tensor ScatterAdd(Tensor indices, Tensor updates, long axis)
        {
            IntPtr r;
            var err = NativeMethods.shp_tensor_scatter_add(Ptr, indices.Ptr, updates.Ptr, axis, out r);
            GC.KeepAlive(indices.owner);
            GC.KeepAlive(updates.owner);
            return Result(err, r);
        }
    }
}
