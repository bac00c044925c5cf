// Loading libshapepoly.so. The type initializer of NativeMethods loads the library and checks its
// ABI; the public entry points (Scope, Program.Load*, the option classes, Function, Library) call
// Loader.Ensure first, so a missing library reaches the caller as a DllNotFoundException that
// says what to set, instead of mono's bare "shapepoly" wrapped in a TypeInitializationException.
using System;

namespace ShapePoly
{
    internal static class Loader
    {
        /// <summary>The file [DllImport("shapepoly")] resolves to on Linux.</summary>
        internal const string FileName = "lib" + NativeMethods.Lib + ".so";

        private static volatile bool loaded;

        /// <summary>Loads the library (once); throws the DllNotFoundException of
        /// <see cref="NotFound"/> unwrapped when it is missing. An ABI mismatch keeps its
        /// documented form (a TypeInitializationException around a VersionMismatch
        /// ShapePolyException).</summary>
        internal static void Ensure()
        {
            if (loaded) return;
            try
            {
                NativeMethods.EnsureLoaded();
            }
            catch (TypeInitializationException e) when (e.InnerException is DllNotFoundException)
            {
                // A failed type initializer fails the same way on every later call: a new
                // exception each time keeps the stack traces apart.
                var found = e.InnerException;
                throw new DllNotFoundException(found.Message, found.InnerException);
            }
            loaded = true;
        }

        /// <summary>The exception for a missing library: the file looked for, and the two ways
        /// to point mono at it. <paramref name="mono"/> (mono's own exception) is kept
        /// inside.</summary>
        internal static DllNotFoundException NotFound(DllNotFoundException mono)
        {
            const string lib = NativeMethods.Lib;
            return new DllNotFoundException(
                "the C# binding ShapePoly.dll could not load " + FileName + " (DllImport \"" +
                lib + "\"). Either set LD_LIBRARY_PATH=<directory containing " + FileName +
                "> (a clone's build/lib after `make lib`, or PREFIX/lib after `make install " +
                "PREFIX=...`), or put a ShapePoly.dll.config next to ShapePoly.dll that maps it " +
                "to the installed file: <configuration><dllmap dll=\"" + lib +
                "\" target=\"PREFIX/lib/" + FileName + ".0\" /></configuration>. If the file is " +
                "there, a library it needs may be missing (ldd " + FileName + "); " +
                "MONO_LOG_LEVEL=debug MONO_LOG_MASK=dll shows every path mono tried. (mono: " +
                mono.Message + ")",
                mono);
        }
    }
}
