// Raw P/Invoke declarations: one per function of c_api/include/shapepoly/shapepoly.h, generated
// by tools/gen_ffi.py into NativeMethods.g.cs (the other part of this partial class); this part
// holds the library name, the load-time ABI check and the delegates of the safe layer.
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
    internal static partial class NativeMethods
    {
        // Mono maps "shapepoly" to libshapepoly.so (a dllmap in ShapePoly.dll.config first, then
        // the assembly directory, LD_LIBRARY_PATH and the system library folders).
        internal const string Lib = "shapepoly";

        /// <summary>SHP_ABI_VERSION of the header this binding was written against.</summary>
        internal const int AbiVersion = SHP_ABI_VERSION;

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

        // The signature shared by shp_dim_add, _sub, _mul, ... (Dim's operators).
        internal delegate IntPtr DimBinary(IntPtr a, IntPtr b, out IntPtr dim_out);
    }
}
