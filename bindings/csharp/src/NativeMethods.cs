// Raw P/Invoke declarations: one per function of c_api/include/shapepoly/shapepoly.h.
// Every fallible function returns an owned shp_error_t* (IntPtr.Zero on success), which the
// safe layer turns into a ShapePolyException (ShapePolyException.Check / FromOwnedError).
// Owned handles (scope, program, runtime, runtime options) are passed as SafeHandles, so the
// marshaler keeps them alive (AddRef/Release) for the duration of each call. Borrowed dims
// and tensors are plain IntPtrs; their owners keep the scope alive (Dim/Tensor hold a Scope).
// Strings are passed as NUL-terminated UTF-8 byte[] (Utf8.Encode) and read with Utf8.Decode.
using System;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    internal static class NativeMethods
    {
        // Mono maps "shapepoly" to libshapepoly.so (a dllmap in ShapePoly.dll.config first, then
        // the assembly directory, LD_LIBRARY_PATH and the system library folders).
        internal const string Lib = "shapepoly";

        /// <summary>SHP_ABI_VERSION of the header this binding was written against.</summary>
        internal const int AbiVersion = 1;

        // The first call of any function below runs this check (the type initializer). A missing
        // library becomes a DllNotFoundException that says what to set (Loader.NotFound).
        static NativeMethods()
        {
            int abi;
            try { abi = shp_abi_version(); }
            catch (DllNotFoundException e) { throw Loader.NotFound(e); }
            Library.CheckAbi(abi);
        }

        // Runs the type initializer; called through Loader.Ensure from the public entry points.
        internal static void EnsureLoaded() { }

        // ---- Version
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_version_string();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_abi_version();

        // ---- Errors
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_error_code(IntPtr error);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_error_message(IntPtr error);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_error_destroy(IntPtr error);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_code_string(int code);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_error_create(int code, byte[] message);
        // Witnesses and verified fixes of an error (borrowed strings; counts 0 for other errors)
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_error_witness_count(IntPtr error);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.U1)] internal static extern bool shp_error_witness_holds(IntPtr error, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_error_witness_variable_count(IntPtr error, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_error_witness_variable_name(IntPtr error, UIntPtr i, UIntPtr j);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern long shp_error_witness_variable_value(IntPtr error, UIntPtr i, UIntPtr j);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_error_fix_count(IntPtr error);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_error_fix(IntPtr error, UIntPtr i);

        // ---- Scopes
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_create(IntPtr[] constraints, UIntPtr num, out IntPtr scope_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_create_with_ranges(IntPtr[] constraints, UIntPtr num_constraints,
            IntPtr[] names, long[] mins, long[] maxs, UIntPtr num_ranges, out IntPtr scope_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_scope_destroy(IntPtr scope);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_declare(ScopeHandle scope, byte[] name, long min, long max);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_check(ScopeHandle scope, IntPtr a, int op, IntPtr b, byte[] message);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_scope_set_hint(ScopeHandle scope, byte[] name, long value);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_hint(ScopeHandle scope, byte[] name, [MarshalAs(UnmanagedType.U1)] out bool has_hint_out,
            out long value_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_scope_set_guard_policy(ScopeHandle scope, int policy);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_dim_guard(IntPtr a, int op, IntPtr b, byte[] message, [MarshalAs(UnmanagedType.U1)] out bool bool_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_assume(ScopeHandle scope, IntPtr a, int op, IntPtr b, byte[] message);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_scope_variable_count(ScopeHandle scope);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_scope_variable_name(ScopeHandle scope, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_variable_range(ScopeHandle scope, UIntPtr i, out long min_out, out long max_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.U1)] internal static extern bool shp_scope_variable_is_unbacked(ScopeHandle scope, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_scope_variable_origin(ScopeHandle scope, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_scope_constraint_count(ScopeHandle scope);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_scope_constraint_text(ScopeHandle scope, UIntPtr i);

        // ---- Dims
        internal delegate IntPtr DimBinary(IntPtr a, IntPtr b, out IntPtr dim_out);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_parse(ScopeHandle scope, byte[] text, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_constant(ScopeHandle scope, long value, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_variable(ScopeHandle scope, byte[] name, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_add(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_sub(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_mul(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_floordiv(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_mod(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_max(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_min(IntPtr a, IntPtr b, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_neg(IntPtr a, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_pow(IntPtr a, long exponent, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_dim_to_string(IntPtr dim, byte[] buf, UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.U1)]
        internal static extern bool shp_dim_is_constant(IntPtr dim, out long value_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_dim_variables(IntPtr dim, [In, Out] IntPtr[] names_out, UIntPtr cap, out UIntPtr count_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_bounds(IntPtr dim, out long lo_out, out long hi_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_dim_compare(IntPtr a, int op, IntPtr b, out int truth_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_dim_evaluate(IntPtr dim, IntPtr[] names, long[] values, UIntPtr n, out long value_out);

        // ---- Shapes and solving
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_shape_parse(ScopeHandle scope, byte[] spec, long[] like, UIntPtr like_rank,
            [In, Out] IntPtr[] dims_out, UIntPtr dims_cap, out UIntPtr rank_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_scope_solve(ScopeHandle scope, UIntPtr num_args, IntPtr[] specs, IntPtr[] shapes,
            UIntPtr[] ranks, out IntPtr bindings_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_bindings_count(IntPtr b);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_bindings_name(IntPtr b, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern long shp_bindings_value(IntPtr b, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_bindings_destroy(IntPtr b);

        // ---- Tensors
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_input(ScopeHandle scope, byte[] name, int dtype, byte[] shape_spec, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_input_dims(ScopeHandle scope, byte[] name, int dtype, IntPtr[] dims, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_dim_input(ScopeHandle scope, byte[] var_name, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_constant(ScopeHandle scope, int dtype, long[] shape, UIntPtr rank, IntPtr data,
            UIntPtr nbytes, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_unary(int op, IntPtr x, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_binary(int op, IntPtr a, IntPtr b, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_compare(IntPtr a, int op, IntPtr b, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_select(IntPtr pred, IntPtr on_true, IntPtr on_false, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_convert(IntPtr x, int dtype, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_broadcast_to(IntPtr x, IntPtr[] dims, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_reshape(IntPtr x, IntPtr[] dims, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_transpose(IntPtr x, long[] permutation, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_concatenate(IntPtr[] xs, UIntPtr n, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_slice(IntPtr x, IntPtr[] start, IntPtr[] limit, long[] strides, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_pad(IntPtr x, IntPtr[] low, IntPtr[] high, UIntPtr rank, double value, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_reduce(int op, IntPtr x, long[] axes, UIntPtr num_axes,
            [MarshalAs(UnmanagedType.U1)] bool keepdims, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_matmul(IntPtr a, IntPtr b, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_dot_general(IntPtr a, IntPtr b, long[] lhs_batch, long[] rhs_batch, UIntPtr num_batch,
            long[] lhs_contracting, long[] rhs_contracting, UIntPtr num_contracting, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_iota(ScopeHandle scope, int dtype, IntPtr[] dims, UIntPtr rank, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_softmax(IntPtr x, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_layer_norm(IntPtr x, long axis, double epsilon, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_cumsum(IntPtr x, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_take(IntPtr x, IntPtr indices, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_reverse(IntPtr x, long[] axes, UIntPtr num_axes, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_scatter_add(IntPtr base_, IntPtr indices, IntPtr updates, long axis, out IntPtr tensor_out);
        // Neural-network building blocks (ONNX semantics)
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_leaky_relu(IntPtr x, double alpha, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_prelu(IntPtr x, IntPtr slope, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_elu(IntPtr x, double alpha, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_selu(IntPtr x, double alpha, double gamma, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_softplus(IntPtr x, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_softsign(IntPtr x, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_clip(IntPtr x, double min, double max, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_hard_sigmoid(IntPtr x, double alpha, double beta, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_log_softmax(IntPtr x, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_batch_norm(IntPtr x, IntPtr scale, IntPtr bias, IntPtr mean, IntPtr var, double epsilon,
            out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_lrn(IntPtr x, long size, double alpha, double beta, double bias, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_pad_mode(IntPtr x, IntPtr[] low, IntPtr[] high, UIntPtr rank, int mode, double value,
            out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_depth_to_space(IntPtr x, long blocksize, int mode, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_space_to_depth(IntPtr x, long blocksize, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_conv(IntPtr x, IntPtr w, IntPtr bias, UIntPtr num_spatial, long[] strides, long[] dilations,
            long[] pads, int auto_pad, long groups, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_conv_transpose(IntPtr x, IntPtr w, IntPtr bias, UIntPtr num_spatial, long[] strides,
            long[] dilations, long[] pads, long[] output_padding, int auto_pad, long groups, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_reduce_window(int op, IntPtr x, long[] window, long[] strides, long[] window_dilation,
            long[] base_dilation, IntPtr[] pad_low, IntPtr[] pad_high, UIntPtr rank, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_max_pool(IntPtr x, UIntPtr num_spatial, long[] kernel_shape, long[] strides, long[] dilations,
            long[] pads, int auto_pad, [MarshalAs(UnmanagedType.U1)] bool ceil_mode, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_avg_pool(IntPtr x, UIntPtr num_spatial, long[] kernel_shape, long[] strides, long[] dilations,
            long[] pads, int auto_pad, [MarshalAs(UnmanagedType.U1)] bool ceil_mode, [MarshalAs(UnmanagedType.U1)] bool count_include_pad,
            out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_global_avg_pool(IntPtr x, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_global_max_pool(IntPtr x, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_dim_value(ScopeHandle scope, IntPtr dim, out IntPtr tensor_out);
        // Data-dependent sizes (each makes a new unbacked variable)
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_tensor_nonzero(IntPtr x, out IntPtr indices_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_boolean_mask(IntPtr x, IntPtr mask, long axis, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_size_from_value(IntPtr value, byte[] name, long min, long max, out IntPtr dim_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_tensor_dtype(IntPtr tensor);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_shape(IntPtr tensor, [In, Out] IntPtr[] dims_out, UIntPtr cap, out UIntPtr rank_out);

        // ---- Programs
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_tensor_parameter(ScopeHandle scope, byte[] name, int dtype, long[] shape, UIntPtr rank, IntPtr data,
            UIntPtr nbytes, out IntPtr tensor_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_create(ScopeHandle scope, IntPtr[] inputs, UIntPtr num_inputs, IntPtr[] outputs,
            IntPtr[] output_names, UIntPtr num_outputs, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_program_destroy(IntPtr program);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_input_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_input_name(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_input_dtype(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_input_role(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.I1)] internal static extern bool shp_program_input_has_default(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_input_default(ProgramHandle p, UIntPtr i, out IntPtr array_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_input_shape_string(ProgramHandle p, UIntPtr i, byte[] buf, UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_output_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_output_name(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_output_dtype(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_output_role(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_output_shape_string(ProgramHandle p, UIntPtr i, byte[] buf, UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_variable_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_variable_name(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_variable_bounds(ProgramHandle p, UIntPtr i,
            out long lo_out, out long hi_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.U1)] internal static extern bool shp_program_variable_is_unbacked(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_variable_origin(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_constraint_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_constraint_text(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_assertion_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_assertion_text(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_assertion_message(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_guard_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_guard_text(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_guard_message(ProgramHandle p, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_guard_origin(ProgramHandle p, UIntPtr i);

        // ---- Multi-variant programs
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_create_variants(IntPtr[] variants, UIntPtr num_variants, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_variant_count(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_program_variant_guard_count(ProgramHandle p, UIntPtr v);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_variant_guard_text(ProgramHandle p, UIntPtr v, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_variant_guard_message(ProgramHandle p, UIntPtr v, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_variants_exhaustive(ProgramHandle p);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_variants_counterexample(ProgramHandle p, byte[] buf, UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern long shp_bindings_variant(IntPtr b);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_to_text(ProgramHandle p, byte[] buf, UIntPtr cap, out UIntPtr len_out);
        // ---- Costs and the picture (kind: a shp_cost_kind_t value, CostKind)
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_cost(ProgramHandle p, int kind, byte[] buf,
            UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_cost_bounds(ProgramHandle p, int kind,
            out long lo_out, out long hi_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_cost_unbounded_reason(ProgramHandle p, int kind,
            byte[] buf, UIntPtr cap, out UIntPtr len_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_to_dot(ProgramHandle p, byte[] buf, UIntPtr cap,
            out UIntPtr len_out);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_check_shapes(ProgramHandle p, IntPtr[] input_names, IntPtr[] shapes, UIntPtr[] ranks,
            UIntPtr num_inputs, out IntPtr bindings_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_output_shape(ProgramHandle p, UIntPtr i, IntPtr bindings, [In, Out] long[] dims_out,
            UIntPtr cap, out UIntPtr rank_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_serialize(ProgramHandle p, out IntPtr buffer_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_buffer_data(IntPtr buffer);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_buffer_size(IntPtr buffer);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_buffer_destroy(IntPtr buffer);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_load_options_create(out IntPtr options_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_load_options_set_max_bytes(LoadOptionsHandle options, UIntPtr max_bytes);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_load_options_destroy(IntPtr options);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_program_load(byte[] data, UIntPtr size, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_load_with_options(byte[] data, UIntPtr size, LoadOptionsHandle options, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_program_schema_version();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_load_file(byte[] path, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_save_file(ProgramHandle program, byte[] path);

        // ---- Differentiation
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_jvp(ProgramHandle p, IntPtr[] wrt, UIntPtr num_wrt, out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_vjp(ProgramHandle p, IntPtr[] of, UIntPtr num_of, IntPtr[] wrt, UIntPtr num_wrt,
            out IntPtr program_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_program_grad(ProgramHandle p, byte[] of, IntPtr[] wrt, UIntPtr num_wrt, out IntPtr program_out);

        // ---- Runtime
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_runtime_options_create(out IntPtr options_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_runtime_options_set_num_threads(RuntimeOptionsHandle o, int n);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_options_set_plan_cache_capacity(RuntimeOptionsHandle o, UIntPtr n);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_options_set_bound_allocation(RuntimeOptionsHandle o, UIntPtr max_bytes);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_runtime_options_destroy(IntPtr o);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_create(ProgramHandle program, RuntimeOptionsHandle options, out IntPtr runtime_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_create(ProgramHandle program, IntPtr no_options, out IntPtr runtime_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_runtime_destroy(IntPtr runtime);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_run(RuntimeHandle r, IntPtr[] input_names, IntPtr[] inputs, UIntPtr num_inputs,
            [In, Out] IntPtr[] outputs_out, UIntPtr num_outputs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_run_into(RuntimeHandle r, IntPtr[] input_names, IntPtr[] inputs, UIntPtr num_inputs,
            IntPtr[] outputs, UIntPtr num_outputs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_dry_run(RuntimeHandle r, IntPtr[] input_names, int[] dtypes, IntPtr[] shapes,
            UIntPtr[] ranks, UIntPtr num_inputs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_cost(RuntimeHandle r, int kind,
            IntPtr[] input_names, int[] dtypes, IntPtr[] shapes, UIntPtr[] ranks,
            UIntPtr num_inputs, out long value_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_output_shape(RuntimeHandle r, UIntPtr i, [In, Out] long[] dims_out, UIntPtr cap, out UIntPtr rank_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_runtime_output_dim_bounds(RuntimeHandle r, UIntPtr i, UIntPtr axis,
            [MarshalAs(UnmanagedType.U1)] out bool data_dependent_out, out long min_out, out long max_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_runtime_plans_built(RuntimeHandle r);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_runtime_cache_hits(RuntimeHandle r);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern long shp_runtime_last_plan_build_ns(RuntimeHandle r);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern long shp_runtime_last_variant(RuntimeHandle r);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_runtime_variant_plans_built(RuntimeHandle r, UIntPtr v);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_runtime_variant_cache_hits(RuntimeHandle r, UIntPtr v);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_runtime_num_threads(RuntimeHandle r);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_runtime_simd_target(RuntimeHandle r);

        // ---- Compiled functions
        /// <summary>shp_trace_fn: must not throw (Function's callback catches everything).</summary>
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate IntPtr TraceFn(IntPtr scope, IntPtr inputs, UIntPtr num_inputs, IntPtr outputs, UIntPtr num_outputs,
            IntPtr user_data);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_function_options_create(out IntPtr options_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_function_options_destroy(IntPtr options);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_options_set_dynamic(FunctionOptionsHandle options, int mode);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_options_set_duck_sizing(FunctionOptionsHandle options, [MarshalAs(UnmanagedType.U1)] bool on);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_options_set_recompile_limit(FunctionOptionsHandle options, int limit);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_options_set_stance(FunctionOptionsHandle options, int stance);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_options_set_num_threads(FunctionOptionsHandle options, int num_threads);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_create(TraceFn trace_fn, IntPtr user_data, IntPtr[] input_names, int[] dtypes,
            UIntPtr[] ranks, UIntPtr num_inputs, IntPtr[] output_names, UIntPtr num_outputs, FunctionOptionsHandle options,
            out IntPtr function_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_create(TraceFn trace_fn, IntPtr user_data, IntPtr[] input_names, int[] dtypes,
            UIntPtr[] ranks, UIntPtr num_inputs, IntPtr[] output_names, UIntPtr num_outputs, IntPtr no_options,
            out IntPtr function_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_function_destroy(IntPtr function);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_mark_dynamic(FunctionHandle function, byte[] input, long axis, long min, long max);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_mark_static(FunctionHandle function, byte[] input, long axis);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_function_set_stance(FunctionHandle function, int stance);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_function_call(FunctionHandle function, IntPtr[] names, IntPtr[] inputs, UIntPtr num_inputs,
            [In, Out] IntPtr[] outputs_out, UIntPtr num_outputs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_function_event_count(FunctionHandle function);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_function_event_text(FunctionHandle function, UIntPtr i);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_function_trace_count(FunctionHandle function);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ulong shp_function_cache_hits(FunctionHandle function);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_function_variant_count(FunctionHandle function);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_function_export(FunctionHandle function, out IntPtr program_out);

        // ---- Arrays
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_array_create(int dtype, long[] shape, UIntPtr rank, out IntPtr array_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr shp_array_wrap(int dtype, long[] shape, UIntPtr rank, IntPtr data, UIntPtr nbytes, out IntPtr array_out);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_array_data(IntPtr array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_array_nbytes(IntPtr array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int shp_array_dtype(IntPtr array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern UIntPtr shp_array_rank(IntPtr array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_array_shape(IntPtr array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void shp_array_destroy(IntPtr array);

        // ---- SIMD
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_simd_target();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_set_simd_target(byte[] name);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr shp_simd_sum_f32(float[] data, UIntPtr n, out float sum_out);
    }
}
