using System;

namespace ShapePoly
{
    /// <summary>Facts about the loaded libshapepoly.so and object-free functions.</summary>
    public static class Library
    {
        /// <summary>The SHP_ABI_VERSION this binding was built for.</summary>
        public const int BindingAbiVersion = NativeMethods.AbiVersion;

        /// <summary>The version of the library this binding was built from ("0.1.0"; also the
        /// assembly version; build.sh generates both from SHP_VERSION_* in shapepoly.h).</summary>
        public const string BindingVersion = BuildInfo.Version;

        /// <summary>The loaded library's version, e.g. "0.1.0".</summary>
        public static string Version
        {
            get
            {
                Loader.Ensure();
                return Utf8.Decode(NativeMethods.shp_version_string());
            }
        }

        /// <summary>The loaded library's ABI version (checked against BindingAbiVersion at load).</summary>
        public static int AbiVersion
        {
            get
            {
                Loader.Ensure();
                return NativeMethods.shp_abi_version();
            }
        }

        /// <summary>The Highway SIMD target the kernels dispatch to, e.g. "AVX3".</summary>
        public static string SimdTarget
        {
            get
            {
                Loader.Ensure();
                return Utf8.Decode(NativeMethods.shp_simd_target());
            }
        }

        /// <summary>The newest program schema version the library reads and the one it writes.</summary>
        public static int ProgramSchemaVersion
        {
            get
            {
                Loader.Ensure();
                return NativeMethods.shp_program_schema_version();
            }
        }

        /// <summary>The fixed text of an error code, e.g. "SHP_PARSE_ERROR: parse error".</summary>
        public static string CodeString(ShapePolyCode code)
        {
            Loader.Ensure();
            return Utf8.Decode(NativeMethods.shp_code_string((int)code));
        }

        /// <summary>Makes every kernel dispatch to exactly the SIMD target <paramref name="name"/>
        /// ("AVX2", "SSE4", ...); null or "best" lifts the cap. Process-wide
        /// (shp_set_simd_target; also the SHP_SIMD_TARGET environment variable).</summary>
        public static void SetSimdTarget(string name)
        {
            Loader.Ensure();
            ShapePolyException.Check(NativeMethods.shp_set_simd_target(name == null ? null : Utf8.Encode(name)));
        }

        /// <summary>Sums floats with the SIMD kernel (double accumulation, one rounding).</summary>
        public static float SimdSum(float[] data)
        {
            if (data == null) throw new ArgumentNullException("data");
            Loader.Ensure();
            float sum;
            ShapePolyException.Check(NativeMethods.shp_simd_sum_f32(data, Sizes.U(data.Length), out sum));
            return sum;
        }

        /// <summary>Throws unless the library's ABI version equals the binding's (run once,
        /// when the first native function is called).</summary>
        internal static void CheckAbi(int libraryAbi)
        {
            if (libraryAbi != NativeMethods.AbiVersion)
                throw new ShapePolyException(ShapePolyCode.VersionMismatch,
                    "libshapepoly ABI version mismatch: the loaded library has ABI " + libraryAbi +
                    " but the C# binding ShapePoly.dll was built for ABI " + NativeMethods.AbiVersion +
                    "; use the libshapepoly.so this binding was built with");
        }
    }
}
