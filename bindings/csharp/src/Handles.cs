// One SafeHandle per owned C type: ReleaseHandle calls the C destroy function exactly once,
// whether from Dispose or from the finalizer. Handles are created from the out-param of a
// create/load call right after it succeeds.
using System;
using Microsoft.Win32.SafeHandles;

namespace ShapePoly
{
    internal sealed class ScopeHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal ScopeHandle(IntPtr h) : base(true) { SetHandle(h); }
        // A scope the library owns (the one a trace function receives): never destroyed here.
        internal ScopeHandle(IntPtr h, bool owns) : base(owns) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_scope_destroy(handle); return true; }
    }

    internal sealed class ProgramHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal ProgramHandle(IntPtr h) : base(true) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_program_destroy(handle); return true; }
    }

    internal sealed class RuntimeHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal RuntimeHandle(IntPtr h) : base(true) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_runtime_destroy(handle); return true; }
    }

    internal sealed class RuntimeOptionsHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal RuntimeOptionsHandle(IntPtr h) : base(true) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_runtime_options_destroy(handle); return true; }
    }

    internal sealed class FunctionOptionsHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal FunctionOptionsHandle(IntPtr h) : base(true) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_function_options_destroy(handle); return true; }
    }

    // Also owns what the C function calls back into: the GCHandle of the trace state (passed
    // as user_data), freed only after the C function is destroyed.
    internal sealed class FunctionHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        private readonly System.Runtime.InteropServices.GCHandle state;

        internal FunctionHandle(IntPtr h, System.Runtime.InteropServices.GCHandle state) : base(true)
        {
            SetHandle(h);
            this.state = state;
        }

        protected override bool ReleaseHandle()
        {
            NativeMethods.shp_function_destroy(handle);
            state.Free();
            return true;
        }
    }
}
