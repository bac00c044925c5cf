// Hints, guards, assumptions and multi-variant programs: code that branches on a shape
// comparison the engine cannot decide either decides it on example values (the hints) and
// records the choice as a guard that runs check (GuardFailed), or traces each branch under
// Scope.Assume and combines the traces with Program.CreateVariants; the runtime then runs the
// first variant whose guards hold.
using System;
using System.Collections.Generic;

namespace ShapePoly
{
    /// <summary>A guard: a precondition a program checks before running, failing with
    /// <see cref="ShapePolyCode.GuardFailed"/>.</summary>
    public sealed class ProgramGuard
    {
        /// <summary>The guarded comparison, e.g. "s0 == s1".</summary>
        public string Text { get; internal set; }
        /// <summary>Shown when it fails ("" when none was given).</summary>
        public string Message { get; internal set; }
        /// <summary>What recorded it: "shp_dim_guard", "shp_scope_assume", or the op and axis;
        /// null in the lists of <see cref="Program.VariantGuards"/>, for which the library keeps
        /// none.</summary>
        public string Origin { get; internal set; }
        public override string ToString() { return Text + (Message == "" ? "" : " (" + Message + ")"); }
    }

    public sealed partial class Scope
    {
        /// <summary>Gives variable <paramref name="name"/> an example value
        /// (shp_scope_set_hint), creating the variable if the scope does not know it yet. A
        /// hint is never a fact: comparisons and bounds ignore it; only <see cref="Dim.Guard(CmpOp, Dim, string)"/>
        /// and <see cref="ShapePoly.GuardPolicy.FromHints"/> read it. 0 and 1 are ordinary values
        /// (nothing is specialized on them). A value outside the variable's range, or one
        /// violating a fact whose variables all have hints, is a ConstraintViolation error and
        /// keeps the previous hint.</summary>
        public void SetHint(string name, long value)
        {
            if (name == null) throw new ArgumentNullException("name");
            ShapePolyException.Check(NativeMethods.shp_scope_set_hint(Handle, Utf8.Encode(name), value));
        }

        /// <summary>The hint of variable <paramref name="name"/>, null when it has none
        /// (shp_scope_hint). An unknown variable is a NotFound error.</summary>
        public long? Hint(string name)
        {
            if (name == null) throw new ArgumentNullException("name");
            bool has;
            long value;
            ShapePolyException.Check(NativeMethods.shp_scope_hint(Handle, Utf8.Encode(name), out has, out value));
            return has ? value : (long?)null;
        }

        /// <summary>Sets what ops do with a shape comparison they cannot decide
        /// (shp_scope_set_guard_policy). Under <see cref="ShapePoly.GuardPolicy.FromHints"/> an
        /// op whose hints satisfy what it needs records that as a guard; one whose hints do not
        /// fails with ShapeMismatch naming the hint values.</summary>
        public void SetGuardPolicy(GuardPolicy policy)
        {
            ShapePolyException.Check(NativeMethods.shp_scope_set_guard_policy(Handle, (int)policy));
        }

        /// <summary>Adds the guard <c>a op b</c> explicitly (shp_scope_assume), typically to
        /// trace one variant of a program; nothing is recorded when it already follows from the
        /// facts. One that contradicts the constraints is an Unsatisfiable error.</summary>
        public void Assume(Dim a, CmpOp op, Dim b, string message = null)
        {
            var h = Handle;
            ShapePolyException.Check(NativeMethods.shp_scope_assume(h, a.Ptr, (int)op, b.Ptr, Utf8.Encode(message)));
            GC.KeepAlive(a.Owner);
            GC.KeepAlive(b.Owner);
        }

        /// <summary>Assume(a, op, Constant(b), message).</summary>
        public void Assume(Dim a, CmpOp op, long b, string message = null) { Assume(a, op, Constant(b), message); }
    }

    public readonly partial struct Dim
    {
        /// <summary>Decides <c>this op other</c> for code that branches on shapes
        /// (shp_dim_guard). A decided comparison gives its value and records nothing; an
        /// undecidable one is evaluated on the hints, and the comparison or its negation,
        /// whichever holds there, becomes a guard: a fact of the scope and a precondition of
        /// every program built from it afterwards. An undecidable comparison with an unhinted
        /// variable is an Inconclusive error.</summary>
        public bool Guard(CmpOp op, Dim other, string message = null)
        {
            bool r;
            ShapePolyException.Check(NativeMethods.shp_dim_guard(Ptr, (int)op, other.Ptr, Utf8.Encode(message), out r));
            GC.KeepAlive(owner);
            GC.KeepAlive(other.owner);
            return r;
        }
        public bool Guard(CmpOp op, long other, string message = null) { return Guard(op, C(other), message); }
    }

    public sealed partial class Program
    {
        /// <summary>The guards of the program, of variant 0 for a multi-variant program
        /// (shp_program_guard_*).</summary>
        public IReadOnlyList<ProgramGuard> Guards
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_guard_count(h));
                var r = new ProgramGuard[n];
                for (int i = 0; i < n; i++)
                    r[i] = new ProgramGuard
                    {
                        Text = Utf8.Decode(NativeMethods.shp_program_guard_text(h, Sizes.U(i))),
                        Message = Utf8.Decode(NativeMethods.shp_program_guard_message(h, Sizes.U(i))),
                        Origin = Utf8.Decode(NativeMethods.shp_program_guard_origin(h, Sizes.U(i))),
                    };
                return r;
            }
        }

        /// <summary>Combines programs traced under different guards into one program whose
        /// variants are theirs, in this order (shp_program_create_variants; a multi-variant
        /// argument contributes its variants). A run evaluates each variant's guards in order and
        /// runs the first whose guards all hold. The variants must agree on constraints, inputs
        /// and outputs (names, roles, dtypes, ranks); a symbolic shape may differ only where the
        /// variant's guards make it equal, otherwise an InvalidArgument error names the
        /// difference.</summary>
        public static Program CreateVariants(params Program[] variants)
        {
            if (variants == null) throw new ArgumentNullException("variants");
            Loader.Ensure();
            var handles = new ProgramHandle[variants.Length];
            var raw = new IntPtr[variants.Length];
            bool[] added = new bool[variants.Length];
            try
            {
                for (int i = 0; i < variants.Length; i++)
                {
                    if (variants[i] == null) throw new ArgumentNullException("variants", "variant " + i + " is null");
                    // An array of handles is passed as raw pointers: keep each alive meanwhile.
                    handles[i] = variants[i].Handle;
                    handles[i].DangerousAddRef(ref added[i]);
                    raw[i] = handles[i].DangerousGetHandle();
                }
                IntPtr p;
                ShapePolyException.Check(NativeMethods.shp_program_create_variants(raw, Sizes.U(raw.Length), out p));
                return new Program(new ProgramHandle(p));
            }
            finally
            {
                for (int i = 0; i < variants.Length; i++)
                    if (added[i]) handles[i].DangerousRelease();
            }
        }

        /// <summary>The number of variants: 1 for a traced or derived program
        /// (shp_program_variant_count).</summary>
        public int VariantCount { get { return Sizes.I(NativeMethods.shp_program_variant_count(Handle)); } }

        /// <summary>The guards of variant <paramref name="v"/>, without origins; empty if out
        /// of range (shp_program_variant_guard_*).</summary>
        public IReadOnlyList<ProgramGuard> VariantGuards(int v)
        {
            var h = Handle;
            if (v < 0) return new ProgramGuard[0];
            var uv = Sizes.U(v);
            int n = Sizes.I(NativeMethods.shp_program_variant_guard_count(h, uv));
            var r = new ProgramGuard[n];
            for (int i = 0; i < n; i++)
                r[i] = new ProgramGuard
                {
                    Text = Utf8.Decode(NativeMethods.shp_program_variant_guard_text(h, uv, Sizes.U(i))),
                    Message = Utf8.Decode(NativeMethods.shp_program_variant_guard_message(h, uv, Sizes.U(i))),
                };
            return r;
        }

        /// <summary>Whether the variants' guards cover every valuation the constraints allow
        /// (shp_program_variants_exhaustive): True when proven, False when a checked
        /// counterexample exists (<see cref="Counterexample"/>), Unknown when neither could be
        /// shown (an uncovered shape then fails at run time with GuardFailed).</summary>
        public Truth VariantsExhaustive { get { return (Truth)NativeMethods.shp_program_variants_exhaustive(Handle); } }

        /// <summary>The valuation no variant covers when <see cref="VariantsExhaustive"/> is
        /// False, e.g. "n = 3 satisfies the constraints and no variant's guards (...)"; ""
        /// otherwise (shp_program_variants_counterexample).</summary>
        public string Counterexample
        {
            get
            {
                var h = Handle;
                return Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                    NativeMethods.shp_program_variants_counterexample(h, buf, cap, out len));
            }
        }
    }

    public sealed partial class Runtime
    {
        /// <summary>The variant the last successful run used (0 for a single-variant program),
        /// -1 before any (shp_runtime_last_variant).</summary>
        public int LastVariant { get { return checked((int)NativeMethods.shp_runtime_last_variant(Handle)); } }

        /// <summary>Plans built for shapes that variant <paramref name="v"/> ran on; 0 if out of
        /// range (shp_runtime_variant_plans_built).</summary>
        public ulong VariantPlansBuilt(int v)
        {
            var h = Handle;
            return v < 0 ? 0 : NativeMethods.shp_runtime_variant_plans_built(h, Sizes.U(v));
        }

        /// <summary>Calls on variant <paramref name="v"/> that found their plan cached; 0 if out
        /// of range (shp_runtime_variant_cache_hits).</summary>
        public ulong VariantCacheHits(int v)
        {
            var h = Handle;
            return v < 0 ? 0 : NativeMethods.shp_runtime_variant_cache_hits(h, Sizes.U(v));
        }
    }
}
