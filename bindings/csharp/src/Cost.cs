// Symbolic cost and the picture: a program's FLOPs, bytes accessed, peak memory and parameter
// bytes as formulas over its dimension variables, their sound bounds under the constraints, the
// value for concrete shapes (through a runtime, which picks the variant that would run), the
// variables' bounds, and the program as a Graphviz DOT graph.
using System;
using System.Collections.Generic;

namespace ShapePoly
{
    public sealed partial class Program
    {
        /// <summary>The cost <paramref name="kind"/> for every shape at once, as a dim
        /// expression over the program's variables (shp_program_cost), e.g. "92*batch" FLOPs;
        /// a multi-variant program gives variant 0's formula. A <paramref name="kind"/> outside
        /// <see cref="CostKind"/> is an InvalidArgument error; PeakBytes of a program the
        /// runtime cannot plan is Unsupported.</summary>
        public string Cost(CostKind kind)
        {
            var h = Handle;
            return Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                NativeMethods.shp_program_cost(h, (int)kind, buf, cap, out len));
        }

        /// <summary>Sound bounds of <see cref="Cost"/>'s formula under the declared ranges and
        /// constraints (shp_program_cost_bounds): every shape the program accepts costs within
        /// [Lo, Hi]. Hi is the guaranteed worst case, or null when it is unbounded (then
        /// <see cref="CostUnboundedReason"/> names the variables that make it so). Errors as
        /// <see cref="Cost"/>.</summary>
        public (long Lo, long? Hi) CostBounds(CostKind kind)
        {
            long lo, hi;
            ShapePolyException.Check(
                NativeMethods.shp_program_cost_bounds(Handle, (int)kind, out lo, out hi));
            // The C API reports an unbounded worst case as INT64_MAX.
            return (lo, hi == long.MaxValue ? (long?)null : hi);
        }

        /// <summary>Why the worst case of <paramref name="kind"/> is unbounded
        /// (shp_program_cost_unbounded_reason), e.g. "no upper bound on batch; declare a range
        /// (shp_scope_declare) or add a constraint such as batch &lt;= 4096 when tracing"; ""
        /// when <see cref="CostBounds"/> gives a finite Hi. Errors as <see cref="Cost"/>.</summary>
        public string CostUnboundedReason(CostKind kind)
        {
            var h = Handle;
            return Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                NativeMethods.shp_program_cost_unbounded_reason(h, (int)kind, buf, cap, out len));
        }

        /// <summary>Sound inclusive bounds of variable <paramref name="i"/> (as listed by
        /// <see cref="Variables"/>) under the declared ranges and constraints, of variant 0 for
        /// a multi-variant program (shp_program_variable_bounds; long.MinValue / long.MaxValue:
        /// unbounded, as <see cref="Dim.Bounds"/>). An index past the last variable is an
        /// InvalidArgument error.</summary>
        public (long Lo, long Hi) VariableBounds(int i)
        {
            if (i < 0)
                throw new ArgumentOutOfRangeException(nameof(i), i, "variable index must be >= 0");
            long lo, hi;
            ShapePolyException.Check(
                NativeMethods.shp_program_variable_bounds(Handle, Sizes.U(i), out lo, out hi));
            return (lo, hi);
        }

        /// <summary>The program as a Graphviz DOT graph (shp_program_to_dot): one node per
        /// operation with its attributes, edges labelled with dtypes and symbolic shapes,
        /// inputs with their roles, outputs with their names, one cluster per variant and a
        /// legend with the variables, constraints, assertions and guards. Render it with
        /// <c>dot -Tsvg</c>.</summary>
        public string ToDot()
        {
            var h = Handle;
            return Utf8.Snprintf((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                NativeMethods.shp_program_to_dot(h, buf, cap, out len));
        }
    }

    public sealed partial class Runtime
    {
        /// <summary>The cost <paramref name="kind"/> (<see cref="Program.Cost"/>) for concrete
        /// input shapes without running (shp_runtime_cost): the arguments and every check are
        /// those of <see cref="DryRun"/> (a dimension input is a one-element array with its
        /// value; dtypes default to the program's), then the formula of the variant that would
        /// run is evaluated. For PeakBytes the value bounds the memory the run would use. Plans
        /// and caches like a dry run. Errors as DryRun, plus InvalidArgument for a
        /// <paramref name="kind"/> outside <see cref="CostKind"/> and Overflow when the value
        /// exceeds long.</summary>
        public long Cost(CostKind kind, IDictionary<string, long[]> shapes,
                         IDictionary<string, DType> dtypes = null)
        {
            long value = 0;
            WithShapes(shapes, dtypes, (h, names, dt, ptrs, ranks, n) =>
                NativeMethods.shp_runtime_cost(h, (int)kind, names, dt, ptrs, ranks, n, out value));
            return value;
        }
    }
}
