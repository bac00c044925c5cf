namespace ShapePoly
{
    /// <summary>Element types (shp_dtype_t). F32, F64, I32, I64 and Bool are the compute types;
    /// the others are storage types: an operation on them computes in f32 (F16, BF16), i32 (I8,
    /// U8, I16, U16) or i64 (U32, U64) and rounds (to nearest even) or wraps once when it stores
    /// its result. F16 (IEEE binary16) and BF16 (bfloat16) elements are their 16 bits in a
    /// ushort (<see cref="F16Bits"/>, <see cref="BF16Bits"/>). The lower-case name
    /// (<c>DType.BF16.ToString().ToLowerInvariant()</c>, "bf16") is the library's.</summary>
    public enum DType
    {
        F32 = 0, F64 = 1, I32 = 2, I64 = 3, Bool = 4, F16 = 5, BF16 = 6, I8 = 7, U8 = 8, I16 = 9,
        U16 = 10, U32 = 11, U64 = 12
    }

    /// <summary>Comparison operators (shp_cmp_t).</summary>
    public enum CmpOp { Eq = 0, Ne = 1, Lt = 2, Le = 3, Gt = 4, Ge = 5 }

    /// <summary>Three-valued truth (shp_truth_t): Unknown means neither the comparison nor
    /// its negation can be proven under the scope's facts.</summary>
    public enum Truth { False = 0, True = 1, Unknown = 2 }

    /// <summary>What an op does with a shape comparison it needs and cannot decide
    /// (shp_guard_policy_t): fail with Inconclusive (the default), or decide it on the hints and
    /// record a guard named after the op (a hint of 1 never makes a dim broadcast).</summary>
    public enum GuardPolicy { Never = 0, FromHints = 1 }

    /// <summary>Which axes are symbolic in a new trace of a <see cref="Function"/>
    /// (shp_dynamic_mode_t): Auto (the default) traces statically first and makes an axis
    /// symbolic once its size changes; All makes every axis symbolic from the first trace; None
    /// traces every new shape statically.</summary>
    public enum DynamicMode { Auto = 0, All = 1, None = 2 }

    /// <summary>What a <see cref="Function"/> call does when no variant covers its shapes
    /// (shp_stance_t): Default traces again up to the recompile limit, then fails with
    /// GuardFailed; FailOnRecompile never traces again once a variant exists (GuardFailed naming
    /// the failed guards); DynamicOnLimit traces one fully dynamic variant at the limit;
    /// ForceTrace traces every call and runs that trace once, the variants neither used nor
    /// changed (to debug a trace delegate, as PyTorch's force_eager; each such call logs an
    /// event naming FORCE_TRACE).</summary>
    public enum Stance { Default = 0, FailOnRecompile = 1, DynamicOnLimit = 2, ForceTrace = 3 }

    /// <summary>Elementwise unary operations (shp_unary_op_t).</summary>
    public enum UnaryOp
    {
        Neg = 0, Abs = 1, Exp = 2, Log = 3, Log1p = 4, Expm1 = 5, Sqrt = 6, Rsqrt = 7, Sin = 8,
        Cos = 9, Tanh = 10, Logistic = 11, Floor = 12, Ceil = 13, Round = 14, Sign = 15, Not = 16,
        Erf = 17, Tan = 18, Sinh = 19, Cosh = 20, Asin = 21, Acos = 22, Atan = 23, Asinh = 24,
        Acosh = 25, Atanh = 26
    }

    /// <summary>Elementwise binary operations with broadcasting (shp_binary_op_t).</summary>
    public enum BinaryOp { Add = 0, Sub = 1, Mul = 2, Div = 3, Pow = 4, Max = 5, Min = 6, Rem = 7, And = 8, Or = 9, Xor = 10 }

    /// <summary>Reductions (shp_reduce_op_t).</summary>
    public enum ReduceOp { Sum = 0, Mean = 1, Max = 2, Min = 3, Prod = 4 }

    /// <summary>Auto padding of <see cref="Tensor.Conv"/>, <see cref="Tensor.ConvTranspose"/>
    /// and the pools (shp_auto_pad_t): NotSet uses the explicit pads; SameUpper and SameLower
    /// give out = ceil(in / stride), the odd pad at the end / the beginning; Valid pads nothing.</summary>
    public enum AutoPad { NotSet = 0, SameUpper = 1, SameLower = 2, Valid = 3 }

    /// <summary>Padding modes of <see cref="Tensor.Pad(Dim[], Dim[], PadMode, double)"/>
    /// (shp_pad_mode_t): a constant value, a mirror without the edge, or the edge repeated.</summary>
    public enum PadMode { Constant = 0, Reflect = 1, Edge = 2 }

    /// <summary>Channel orders of <see cref="Tensor.DepthToSpace"/> (shp_depth_to_space_mode_t,
    /// ONNX DepthToSpace's DCR and CRD modes).</summary>
    public enum DepthToSpaceMode { Dcr = 0, Crd = 1 }

    /// <summary>The role of a program input (shp_input_role_t): data, a dimension variable's
    /// value, a parameter (constant shape, stored default), or the tangent or cotangent made by
    /// <see cref="Program.Jvp"/> / <see cref="Program.Vjp"/> and <see cref="Program.Grad"/>.</summary>
    public enum InputRole { Data = 0, Dim = 1, Parameter = 2, Tangent = 3, Cotangent = 4 }

    /// <summary>What <see cref="Program.Cost"/> and <see cref="Runtime.Cost"/> measure
    /// (shp_cost_kind_t, fixed values): Flops (floating-point operations, a multiply-add counted
    /// as 2, per docs/ops.md), BytesAccessed (each operation's operands read plus its result
    /// written, before fusion, constants excluded), PeakBytes (the outputs plus the runtime's
    /// arena for intermediates; the runtime never plans more for any shape), ParameterBytes (the
    /// parameter inputs plus the constants).</summary>
    public enum CostKind { Flops = 0, BytesAccessed = 1, PeakBytes = 2, ParameterBytes = 3 }

    /// <summary>The role of a program output (shp_output_role_t): computed by the program as
    /// traced, <c>y.tangent</c> (Jvp) or <c>x.grad</c> (Vjp, Grad).</summary>
    public enum OutputRole { Primal = 0, Tangent = 1, Grad = 2 }
}
