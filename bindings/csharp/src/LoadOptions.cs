using System;
using Microsoft.Win32.SafeHandles;

namespace ShapePoly
{
    /// <summary>Options for <see cref="Program.Load(byte[], LoadOptions)"/> (shp_load_options_t):
    /// the most bytes the program's constants may hold once inflated, in total (default 1 GiB).
    /// The loader checks the sizes a file declares against it before inflating anything.</summary>
    public sealed class LoadOptions : IDisposable
    {
        /// <summary>The default of <see cref="MaxBytes"/>: 1 GiB (SHP_LOAD_DEFAULT_MAX_BYTES).</summary>
        public const long DefaultMaxBytes = 1L << 30;

        private readonly LoadOptionsHandle handle;
        private long maxBytes = DefaultMaxBytes;

        public LoadOptions()
        {
            Loader.Ensure();
            IntPtr o;
            ShapePolyException.Check(NativeMethods.shp_load_options_create(out o));
            handle = new LoadOptionsHandle(o);
        }

        internal LoadOptionsHandle Handle
        {
            get
            {
                if (handle.IsClosed) throw new ObjectDisposedException("LoadOptions");
                return handle;
            }
        }

        /// <summary>The most bytes the constants may hold once inflated, in total
        /// (shp_load_options_set_max_bytes).</summary>
        public long MaxBytes
        {
            get { return maxBytes; }
            set
            {
                if (value < 0) throw new ShapePolyException(ShapePolyCode.InvalidArgument, "max bytes must be >= 0, got " + value);
                ShapePolyException.Check(NativeMethods.shp_load_options_set_max_bytes(Handle, Sizes.U(value)));
                maxBytes = value;
            }
        }

        public void Dispose() { handle.Dispose(); }
    }

    internal sealed class LoadOptionsHandle : SafeHandleZeroOrMinusOneIsInvalid
    {
        internal LoadOptionsHandle(IntPtr h) : base(true) { SetHandle(h); }
        protected override bool ReleaseHandle() { NativeMethods.shp_load_options_destroy(handle); return true; }
    }
}
