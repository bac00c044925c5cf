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
}
