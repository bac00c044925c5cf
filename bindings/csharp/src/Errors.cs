using System;

namespace ShapePoly
{
    /// <summary>The error codes of the C API (shp_code, fixed values). New codes may be
    /// appended by later library versions: an unknown value is kept as its number (compare
    /// with the named values, and treat unknown ones like <see cref="Internal"/>).</summary>
    public enum ShapePolyCode
    {
        Ok = 0,
        InvalidArgument = 1,
        ParseError = 2,
        Inconclusive = 3,
        ScopeMismatch = 4,
        Unsatisfiable = 5,
        ShapeMismatch = 6,
        ConstraintViolation = 7,
        Unsolvable = 8,
        DivisionByZero = 9,
        Overflow = 10,
        DTypeMismatch = 11,
        NotFound = 12,
        InvalidProgram = 13,
        VersionMismatch = 14,
        Unsupported = 15,
        OutOfMemory = 16,
        Internal = 17,
        GuardFailed = 18,
    }

    /// <summary>An error reported by libshapepoly: its <see cref="Code"/> and the library's
    /// message (which names the offending argument, symbol or constraint).</summary>
    public class ShapePolyException : Exception
    {
        /// <summary>The C error code.</summary>
        public ShapePolyCode Code { get; }

        public ShapePolyException(ShapePolyCode code, string message) : base(message) { Code = code; }

        /// <summary>Copies code and message of an owned shp_error_t*, then destroys it.</summary>
        internal static ShapePolyException FromOwnedError(IntPtr error)
        {
            try
            {
                var code = (ShapePolyCode)NativeMethods.shp_error_code(error);
                var message = Utf8.Decode(NativeMethods.shp_error_message(error));
                return new ShapePolyException(code, message);
            }
            finally
            {
                NativeMethods.shp_error_destroy(error);
            }
        }

        /// <summary>Throws if a fallible call returned an error (non-zero pointer).</summary>
        internal static void Check(IntPtr error)
        {
            if (error != IntPtr.Zero) throw FromOwnedError(error);
        }

        public override string ToString()
        {
            return "ShapePolyException(" + Code + "): " + Message;
        }
    }
}
