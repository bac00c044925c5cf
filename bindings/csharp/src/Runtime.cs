using System;
using System.Collections.Generic;

namespace ShapePoly
{
    /// <summary>Options for <see cref="Runtime"/> (shp_runtime_options_t): threads per kernel
    /// call (0 = every hardware thread), plan cache capacity (default 16), bound allocation
    /// of data-dependent stages (default 0: off) and the bound on loop iterations (default -1:
    /// none).</summary>
    public sealed class RuntimeOptions : IDisposable
    {
        private readonly RuntimeOptionsHandle handle;
        private int numThreads;
        private long planCacheCapacity = 16;
        private long boundAllocationBytes;
        private long maxLoopIterations = -1;

        public RuntimeOptions()
        {
            Loader.Ensure();
            IntPtr o;
            ShapePolyException.Check(NativeMethods.shp_runtime_options_create(out o));
            handle = new RuntimeOptionsHandle(o);
        }

        internal RuntimeOptionsHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("RuntimeOptions");
                return handle;
            }
        }

        /// <summary>Threads each kernel call may use (0: all hardware threads; 1: the calling thread only).</summary>
        public int NumThreads
        {
            get { return numThreads; }
            set { ShapePolyException.Check(NativeMethods.shp_runtime_options_set_num_threads(Handle, value)); numThreads = value; }
        }

        /// <summary>How many plans the runtime caches (0: none).</summary>
        public long PlanCacheCapacity
        {
            get { return planCacheCapacity; }
            set
            {
                if (value < 0) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "plan cache capacity must be >= 0, got " + value);
                ShapePolyException.Check(NativeMethods.shp_runtime_options_set_plan_cache_capacity(Handle, Sizes.U(value)));
                planCacheCapacity = value;
            }
        }

        /// <summary>Lets the runtime allocate each data-dependent stage for the upper bounds of
        /// its data-dependent sizes when that arena needs at most this many bytes, so the arena
        /// never grows whatever counts the data gives (shp_runtime_options_set_bound_allocation).
        /// 0 (the default): always allocate for the actual sizes. Results never depend on it.</summary>
        public long BoundAllocationBytes
        {
            get { return boundAllocationBytes; }
            set
            {
                if (value < 0) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "bound allocation bytes must be >= 0, got " + value);
                ShapePolyException.Check(NativeMethods.shp_runtime_options_set_bound_allocation(Handle, Sizes.U(value)));
                boundAllocationBytes = value;
            }
        }

        /// <summary>Bounds the iterations of every while_loop and scan per call (&gt;= 0; -1, the
        /// default: no bound): a loop that would run more fails with
        /// <see cref="ShapePolyCode.ConstraintViolation"/> (a scan before it starts). For programs
        /// from files that are not trusted, whose loops could otherwise run as long as a long
        /// counts. Below -1 is <see cref="ShapePolyCode.InvalidArgument"/>
        /// (shp_runtime_options_set_max_loop_iterations).</summary>
        public long MaxLoopIterations
        {
            get { return maxLoopIterations; }
            set
            {
                ShapePolyException.Check(NativeMethods.shp_runtime_options_set_max_loop_iterations(Handle, value));
                maxLoopIterations = value;
            }
        }

        public void Dispose() { handle.Dispose(); }
    }

    /// <summary>Executes a <see cref="Program"/> (shp_runtime_t) on arrays of any shape the
    /// program accepts. Keeps its own reference to the program (the Program may be disposed
    /// first). Use from one thread at a time; create one runtime per thread.</summary>
    public sealed partial class Runtime : IDisposable
    {
        private readonly RuntimeHandle handle;
        private readonly string[] inputNames;
        private readonly InputRole[] inputRoles;
        private readonly string[] outputNames;

        /// <summary>Creates a runtime; <paramref name="options"/> may be null (defaults) and
        /// may be disposed right after.</summary>
        public Runtime(Program program, RuntimeOptions options = null)
        {
            if (program == null) throw new ArgumentNullException("program");
            var ph = program.Handle;
            IntPtr r;
            if (options == null)
                ShapePolyException.Check(NativeMethods.shp_runtime_create(ph, IntPtr.Zero, out r));
            else
                ShapePolyException.Check(NativeMethods.shp_runtime_create(ph, options.Handle, out r));
            handle = new RuntimeHandle(r);
            var ins = program.Inputs;
            inputNames = new string[ins.Count];
            inputRoles = new InputRole[ins.Count];
            for (int i = 0; i < ins.Count; i++) { inputNames[i] = ins[i].Name; inputRoles[i] = ins[i].Role; }
            var outs = program.Outputs;
            outputNames = new string[outs.Count];
            for (int i = 0; i < outs.Count; i++) outputNames[i] = outs[i].Name;
        }

        internal RuntimeHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("Runtime");
                return handle;
            }
        }

        public void Dispose() { handle.Dispose(); }

        /// <summary>The program's input names in declared order.</summary>
        public IReadOnlyList<string> InputNames { get { return inputNames; } }

        /// <summary>The program's output names in declared order.</summary>
        public IReadOnlyList<string> OutputNames { get { return outputNames; } }

        // ---- Running

        /// <summary>Runs the program with inputs given by name (a dimension input is
        /// <c>NdArray.Scalar(value)</c>) and returns the outputs by name, in the program's
        /// output order. Input arrays are pinned and used without a copy during the call.</summary>
        public Dictionary<string, NdArray> Run(IDictionary<string, NdArray> inputs)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            var names = new List<string>(inputs.Count);
            var arrays = new List<NdArray>(inputs.Count);
            foreach (var kv in inputs) { names.Add(kv.Key); arrays.Add(kv.Value); }
            return RunCore(names, arrays);
        }

        /// <summary>Run with named arguments: <c>rt.Run(("x", x), ("y", y))</c>.</summary>
        public Dictionary<string, NdArray> Run(params (string Name, NdArray Array)[] inputs)
        {
            var names = new List<string>(inputs.Length);
            var arrays = new List<NdArray>(inputs.Length);
            foreach (var kv in inputs) { names.Add(kv.Name); arrays.Add(kv.Array); }
            return RunCore(names, arrays);
        }

        /// <summary>Runs with every input given in the program's declared order.</summary>
        public Dictionary<string, NdArray> RunPositional(params NdArray[] inputs)
        {
            return RunCore(null, inputs);
        }

        private Dictionary<string, NdArray> RunCore(IList<string> names, IList<NdArray> arrays)
        {
            var outs = new IntPtr[outputNames.Length];
            try
            {
                WithInputs(names, arrays, (ns, ins) =>
                    ShapePolyException.Check(NativeMethods.shp_runtime_run(Handle, ns, ins, Sizes.U(ins.Length), outs, Sizes.U(outs.Length))));
                var result = new Dictionary<string, NdArray>(outs.Length);
                for (int i = 0; i < outs.Length; i++) result.Add(outputNames[i], NdArray.CopyFrom(outs[i]));
                return result;
            }
            finally
            {
                foreach (var o in outs) NativeMethods.shp_array_destroy(o);
            }
        }

        /// <summary>Runs writing into caller-provided arrays (no output copy): every output
        /// is given by name with exactly its dtype and shape (see DryRun).</summary>
        public void RunInto(IDictionary<string, NdArray> inputs, IDictionary<string, NdArray> outputs)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            if (outputs == null) throw new ArgumentNullException("outputs");
            var ordered = new NdArray[outputNames.Length];
            foreach (var kv in outputs)
            {
                int j = Array.IndexOf(outputNames, kv.Key);
                if (j < 0)
                    throw new ShapePolyException(ShapePolyCode.NotFound, "unknown output '" + kv.Key + "'; the program's outputs are " +
                        string.Join(", ", outputNames));
                ordered[j] = kv.Value;
            }
            for (int j = 0; j < ordered.Length; j++)
                if (ordered[j] == null) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "missing output '" + outputNames[j] + "'");
            var names = new List<string>(inputs.Count);
            var arrays = new List<NdArray>(inputs.Count);
            foreach (var kv in inputs) { names.Add(kv.Key); arrays.Add(kv.Value); }
            using (var outPins = new Pins())
            {
                var outs = new IntPtr[ordered.Length];
                try
                {
                    for (int j = 0; j < ordered.Length; j++) outs[j] = ordered[j].Wrap(outPins);
                    WithInputs(names, arrays, (ns, ins) =>
                        ShapePolyException.Check(NativeMethods.shp_runtime_run_into(Handle, ns, ins, Sizes.U(ins.Length), outs, Sizes.U(outs.Length))));
                }
                finally
                {
                    foreach (var o in outs) NativeMethods.shp_array_destroy(o);
                }
            }
        }

        /// <summary>Pins and wraps the inputs, calls f(names or null, arrays), then releases everything.</summary>
        internal static void WithInputs(IList<string> names, IList<NdArray> arrays, Action<IntPtr[], IntPtr[]> f)
        {
            if (arrays == null) throw new ArgumentNullException("inputs");
            var wrapped = new IntPtr[arrays.Count];
            using (var pins = new Pins())
            using (var ns = names == null ? null : new NativeStrings(names))
            {
                try
                {
                    for (int k = 0; k < arrays.Count; k++)
                    {
                        if (arrays[k] == null) throw new ArgumentNullException("inputs", "input " + (names == null ? k.ToString() : "'" + names[k] + "'") + " is null");
                        wrapped[k] = arrays[k].Wrap(pins);
                    }
                    f(ns == null ? null : ns.Ptrs, wrapped);
                }
                finally
                {
                    foreach (var a in wrapped) NativeMethods.shp_array_destroy(a);
                }
            }
        }

        /// <summary>A dry run on shapes alone (a dimension input is a one-element array with
        /// its value); dtypes default to the program's. Returns the output shapes by name; a
        /// data-dependent dim is -1 (<see cref="OutputDimBounds"/> bounds it). Plans and caches
        /// like a run.</summary>
        public Dictionary<string, long[]> DryRun(IDictionary<string, long[]> shapes, IDictionary<string, DType> dtypes = null)
        {
            WithShapes(shapes, dtypes, (h, names, dt, ptrs, ranks, n) =>
                NativeMethods.shp_runtime_dry_run(h, names, dt, ptrs, ranks, n));
            var r = new Dictionary<string, long[]>();
            for (int i = 0; i < outputNames.Length; i++) r.Add(outputNames[i], OutputShape(i));
            return r;
        }

        private delegate IntPtr ShapesCall(RuntimeHandle h, IntPtr[] names, int[] dtypes,
                                           IntPtr[] shapes, UIntPtr[] ranks, UIntPtr num_inputs);

        /// <summary>Marshals named shapes (and optional dtypes) as shp_runtime_dry_run takes
        /// them, calls <paramref name="call"/> and throws its error; shared by DryRun and
        /// Cost, whose arguments are the same.</summary>
        private void WithShapes(IDictionary<string, long[]> shapes,
                                IDictionary<string, DType> dtypes, ShapesCall call)
        {
            if (shapes == null) throw new ArgumentNullException("shapes");
            var h = Handle;
            var names = new List<string>(shapes.Count);
            var ptrs = new IntPtr[shapes.Count];
            var ranks = new UIntPtr[shapes.Count];
            int[] dt = dtypes == null ? null : new int[shapes.Count];
            using (var pins = new Pins())
            {
                foreach (var kv in shapes)
                {
                    int k = names.Count;
                    names.Add(kv.Key);
                    ptrs[k] = pins.Add(kv.Value);
                    int idx = Array.IndexOf(inputNames, kv.Key);
                    bool isDim = idx >= 0 && inputRoles[idx] == InputRole.Dim;
                    ranks[k] = Sizes.U(isDim || kv.Value == null ? 0 : kv.Value.Length);
                    if (dt != null)
                    {
                        DType d;
                        if (!dtypes.TryGetValue(kv.Key, out d))
                            throw new ArgumentException(
                                "no dtype given for input '" + kv.Key + "'");
                        dt[k] = (int)d;
                    }
                }
                using (var ns = new NativeStrings(names))
                    ShapePolyException.Check(
                        call(h, ns.Ptrs, dt, ptrs, ranks, Sizes.U(names.Count)));
            }
        }

        /// <summary>The shape of output i from the last successful run or dry run.</summary>
        public long[] OutputShape(int i)
        {
            var h = Handle;
            UIntPtr rank;
            ShapePolyException.Check(NativeMethods.shp_runtime_output_shape(h, Sizes.U(i), null, UIntPtr.Zero, out rank));
            var dims = new long[Sizes.I(rank)];
            ShapePolyException.Check(NativeMethods.shp_runtime_output_shape(h, Sizes.U(i), dims, Sizes.U(dims.Length), out rank));
            return dims;
        }

        /// <summary>Whether dim <paramref name="axis"/> of output <paramref name="i"/> from the
        /// last successful run or dry run is data-dependent, and its bounds
        /// (shp_runtime_output_dim_bounds). After a dry run such a dim is -1 in
        /// <see cref="OutputShape"/> and [Min, Max] bounds it at those input shapes
        /// (long.MaxValue: unbounded); after a run Min = Max = the computed size. Other dims:
        /// false, Min = Max = the size.</summary>
        public (bool DataDependent, long Min, long Max) OutputDimBounds(int i, int axis)
        {
            if (i < 0) throw new ArgumentOutOfRangeException(nameof(i), i, "output index must be >= 0");
            if (axis < 0) throw new ArgumentOutOfRangeException(nameof(axis), axis, "axis must be >= 0");
            bool dd;
            long lo, hi;
            ShapePolyException.Check(NativeMethods.shp_runtime_output_dim_bounds(Handle, Sizes.U(i), Sizes.U(axis), out dd, out lo, out hi));
            return (dd, lo, hi);
        }

        // ---- Statistics

        /// <summary>Number of plans built (calls whose binding was not cached).</summary>
        public ulong PlansBuilt { get { return NativeMethods.shp_runtime_plans_built(Handle); } }
        /// <summary>Number of calls that found their plan in the cache.</summary>
        public ulong CacheHits { get { return NativeMethods.shp_runtime_cache_hits(Handle); } }
        /// <summary>Wall time of the last plan build, in nanoseconds.</summary>
        public long LastPlanBuildNs { get { return NativeMethods.shp_runtime_last_plan_build_ns(Handle); } }
        public int NumThreads { get { return NativeMethods.shp_runtime_num_threads(Handle); } }
        public string SimdTarget { get { return Utf8.Decode(NativeMethods.shp_runtime_simd_target(Handle)); } }
    }
}
