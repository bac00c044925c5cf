using System;
using System.Collections.Generic;

namespace ShapePoly
{
    /// <summary>A symbolic dimension expression (a borrowed <c>const shp_dim_t*</c>) in
    /// normal form, owned by its <see cref="Scope"/>, which this struct keeps alive. Dims are
    /// interned: two dims of one scope are equal expressions exactly when they are Equal.
    /// Arithmetic (<c>+ - *</c>, unary <c>-</c>, FloorDiv, Mod, Max, Min, Pow) throws
    /// ShapePolyException on error (overflow, division by a possibly-zero dim, dims of two
    /// scopes); symbolic comparisons use Compare (three-valued).</summary>
    public readonly partial struct Dim : IEquatable<Dim>
    {
        private readonly IntPtr h;
        private readonly Scope owner;

        internal Dim(IntPtr h, Scope owner) { this.h = h; this.owner = owner; }

        /// <summary>The scope this dim belongs to.</summary>
        public Scope Scope { get { return owner; } }

        internal Scope Owner { get { return owner; } }

        internal IntPtr Ptr
        {
            get
            {
                if (owner == null) throw new InvalidOperationException("default(Dim) is not a dimension");
                owner.ThrowIfDisposed();
                return h;
            }
        }

        internal static IntPtr[] Unwrap(IList<Dim> dims)
        {
            if (dims == null) return new IntPtr[0];
            var r = new IntPtr[dims.Count];
            for (int i = 0; i < r.Length; i++) r[i] = dims[i].Ptr;
            return r;
        }

        /// <summary>Null entries become NULL pointers (meaning "default" or "inferred").</summary>
        internal static IntPtr[] Unwrap(IList<Dim?> dims)
        {
            if (dims == null) return null;
            var r = new IntPtr[dims.Count];
            for (int i = 0; i < r.Length; i++) r[i] = dims[i].HasValue ? dims[i].Value.Ptr : IntPtr.Zero;
            return r;
        }

        internal static Dim[] Wrap(IntPtr[] raw, Scope owner)
        {
            var r = new Dim[raw.Length];
            for (int i = 0; i < raw.Length; i++) r[i] = new Dim(raw[i], owner);
            return r;
        }

        internal static void KeepAlive(IList<Dim> dims) { if (dims != null) foreach (var d in dims) GC.KeepAlive(d.owner); }
        internal static void KeepAlive(IList<Dim?> dims) { if (dims != null) foreach (var d in dims) if (d.HasValue) GC.KeepAlive(d.Value.owner); }

        private static Dim Apply(NativeMethods.DimBinary f, Dim a, Dim b)
        {
            IntPtr r;
            ShapePolyException.Check(f(a.Ptr, b.Ptr, out r));
            GC.KeepAlive(b.owner);
            return new Dim(r, a.owner);
        }

        private Dim C(long v) { if (owner == null) throw new InvalidOperationException("default(Dim) is not a dimension"); return owner.Constant(v); }

        // ---- Arithmetic
        public static Dim operator +(Dim a, Dim b) { return Apply(NativeMethods.shp_dim_add, a, b); }
        public static Dim operator +(Dim a, long b) { return a + a.C(b); }
        public static Dim operator +(long a, Dim b) { return b.C(a) + b; }
        public static Dim operator -(Dim a, Dim b) { return Apply(NativeMethods.shp_dim_sub, a, b); }
        public static Dim operator -(Dim a, long b) { return a - a.C(b); }
        public static Dim operator -(long a, Dim b) { return b.C(a) - b; }
        public static Dim operator *(Dim a, Dim b) { return Apply(NativeMethods.shp_dim_mul, a, b); }
        public static Dim operator *(Dim a, long b) { return a * a.C(b); }
        public static Dim operator *(long a, Dim b) { return b.C(a) * b; }
        public static Dim operator -(Dim a)
        {
            IntPtr r;
            ShapePolyException.Check(NativeMethods.shp_dim_neg(a.Ptr, out r));
            return new Dim(r, a.owner);
        }

        /// <summary>floordiv(this, d) (Python floor semantics; d must be provably non-zero).</summary>
        public Dim FloorDiv(Dim d) { return Apply(NativeMethods.shp_dim_floordiv, this, d); }
        public Dim FloorDiv(long d) { return FloorDiv(C(d)); }
        /// <summary>mod(this, d): the sign of the divisor (Python semantics).</summary>
        public Dim Mod(Dim d) { return Apply(NativeMethods.shp_dim_mod, this, d); }
        public Dim Mod(long d) { return Mod(C(d)); }
        public Dim Max(Dim d) { return Apply(NativeMethods.shp_dim_max, this, d); }
        public Dim Max(long d) { return Max(C(d)); }
        public Dim Min(Dim d) { return Apply(NativeMethods.shp_dim_min, this, d); }
        public Dim Min(long d) { return Min(C(d)); }
        /// <summary>this^exponent (exponent >= 0).</summary>
        public Dim Pow(long exponent)
        {
            IntPtr r;
            ShapePolyException.Check(NativeMethods.shp_dim_pow(Ptr, exponent, out r));
            return new Dim(r, owner);
        }

        // ---- Queries

        /// <summary>Three-valued comparison <c>this op other</c> under the scope's facts:
        /// true / false when it holds for every / no valuation, null when unknown.</summary>
        public bool? Compare(CmpOp op, Dim other)
        {
            var t = CompareTruth(op, other);
            return t == Truth.Unknown ? (bool?)null : t == Truth.True;
        }
        public bool? Compare(CmpOp op, long other) { return Compare(op, C(other)); }

        /// <summary>Like Compare, returning the Truth enum.</summary>
        public Truth CompareTruth(CmpOp op, Dim other)
        {
            int t;
            ShapePolyException.Check(NativeMethods.shp_dim_compare(Ptr, (int)op, other.Ptr, out t));
            GC.KeepAlive(owner);
            GC.KeepAlive(other.owner);
            return (Truth)t;
        }

        /// <summary>Sound inclusive bounds (long.MinValue / long.MaxValue: unbounded).</summary>
        public (long Lo, long Hi) Bounds
        {
            get
            {
                long lo, hi;
                ShapePolyException.Check(NativeMethods.shp_dim_bounds(Ptr, out lo, out hi));
                GC.KeepAlive(owner);
                return (lo, hi);
            }
        }

        /// <summary>True (and <paramref name="value"/> set) when this dim is a constant.</summary>
        public bool TryGetConstant(out long value)
        {
            bool r = NativeMethods.shp_dim_is_constant(Ptr, out value);
            GC.KeepAlive(owner);
            return r;
        }

        /// <summary>The constant value, or null for a symbolic dim.</summary>
        public long? ConstantValue { get { long v; return TryGetConstant(out v) ? v : (long?)null; } }

        /// <summary>The variables occurring in this dim (also inside floordiv/mod/max/min),
        /// in order of their first mention in the scope.</summary>
        public string[] Variables
        {
            get
            {
                var p = Ptr;
                UIntPtr n;
                ShapePolyException.Check(NativeMethods.shp_dim_variables(p, null, UIntPtr.Zero, out n));
                var raw = new IntPtr[Sizes.I(n)];
                ShapePolyException.Check(NativeMethods.shp_dim_variables(p, raw, Sizes.U(raw.Length), out n));
                var names = Array.ConvertAll(raw, Utf8.Decode);
                GC.KeepAlive(owner);
                return names;
            }
        }

        /// <summary>Evaluates with every variable given by name (constraints are not checked).</summary>
        public long Evaluate(IDictionary<string, long> values)
        {
            if (values == null) throw new ArgumentNullException("values");
            var names = new List<string>(values.Count);
            var vals = new long[values.Count];
            foreach (var kv in values) { vals[names.Count] = kv.Value; names.Add(kv.Key); }
            long r;
            using (var ns = new NativeStrings(names))
                ShapePolyException.Check(NativeMethods.shp_dim_evaluate(Ptr, ns.Ptrs, vals, Sizes.U(vals.Length), out r));
            GC.KeepAlive(owner);
            return r;
        }

        public long Evaluate(params (string Name, long Value)[] values)
        {
            var d = new Dictionary<string, long>();
            foreach (var v in values) d[v.Name] = v.Value;  // a repeated name keeps the last value
            return Evaluate(d);
        }

        /// <summary>The canonical text, e.g. "2*b + 1"; it parses back to the same dim.</summary>
        public override string ToString()
        {
            if (owner == null) return "<default Dim>";
            var p = Ptr;
            var s = Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) => NativeMethods.shp_dim_to_string(p, buf, cap, out len));
            GC.KeepAlive(owner);
            return s;
        }

        /// <summary>Identity of the interned expression (same scope and same normal form).</summary>
        public bool Equals(Dim other) { return h == other.h && ReferenceEquals(owner, other.owner); }
        public override bool Equals(object obj) { return obj is Dim && Equals((Dim)obj); }
        public override int GetHashCode() { return h.GetHashCode(); }
    }
}
