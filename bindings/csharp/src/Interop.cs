// Marshaling helpers: UTF-8 strings in and out, arrays of native UTF-8 strings, pinned
// managed arrays, and the snprintf-style string getters of the C API.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace ShapePoly
{
    internal static class Utf8
    {
        /// <summary>NUL-terminated UTF-8 bytes of s (null stays null: a NULL pointer).</summary>
        internal static byte[] Encode(string s)
        {
            if (s == null) return null;
            var n = Encoding.UTF8.GetByteCount(s);
            var b = new byte[n + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, b, 0);
            return b;
        }

        /// <summary>Copies a borrowed NUL-terminated UTF-8 string (null for NULL).</summary>
        internal static string Decode(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            int n = 0;
            while (Marshal.ReadByte(p, n) != 0) n++;
            var b = new byte[n];
            Marshal.Copy(p, b, 0, n);
            return Encoding.UTF8.GetString(b);
        }

        internal delegate IntPtr SnprintfCall(byte[] buf, UIntPtr cap, out UIntPtr len);

        /// <summary>Calls an snprintf-style getter twice: once for the length, once for the text.</summary>
        internal static string Snprintf(SnprintfCall call)
        {
            UIntPtr len;
            ShapePolyException.Check(call(null, UIntPtr.Zero, out len));
            var buf = new byte[(long)len.ToUInt64() + 1];
            ShapePolyException.Check(call(buf, (UIntPtr)buf.Length, out len));
            return Encoding.UTF8.GetString(buf, 0, (int)len.ToUInt64());
        }
    }

    /// <summary>An array of NUL-terminated UTF-8 strings in unmanaged memory
    /// (a <c>const char* const*</c>), freed on Dispose.</summary>
    internal sealed class NativeStrings : IDisposable
    {
        internal readonly IntPtr[] Ptrs;

        internal NativeStrings(IList<string> strings)
        {
            Ptrs = new IntPtr[strings == null ? 0 : strings.Count];
            try
            {
                for (int i = 0; i < Ptrs.Length; i++)
                {
                    if (strings[i] == null) continue;  // a NULL entry: the C API reports it
                    var b = Utf8.Encode(strings[i]);
                    Ptrs[i] = Marshal.AllocHGlobal(b.Length);
                    Marshal.Copy(b, 0, Ptrs[i], b.Length);
                }
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        public void Dispose()
        {
            for (int i = 0; i < Ptrs.Length; i++)
            {
                if (Ptrs[i] != IntPtr.Zero) Marshal.FreeHGlobal(Ptrs[i]);
                Ptrs[i] = IntPtr.Zero;
            }
        }
    }

    /// <summary>Pins managed arrays (GCHandle) until Dispose; Add returns the address.</summary>
    internal sealed class Pins : IDisposable
    {
        private readonly List<GCHandle> handles = new List<GCHandle>();

        internal IntPtr Add(Array a)
        {
            if (a == null) return IntPtr.Zero;
            var h = GCHandle.Alloc(a, GCHandleType.Pinned);
            handles.Add(h);
            return a.Length == 0 ? IntPtr.Zero : h.AddrOfPinnedObject();
        }

        public void Dispose()
        {
            foreach (var h in handles) h.Free();
            handles.Clear();
        }
    }

    internal static class Sizes
    {
        internal static UIntPtr U(int n) { return (UIntPtr)(uint)n; }
        internal static UIntPtr U(long n) { return (UIntPtr)(ulong)n; }
        internal static int I(UIntPtr n) { return checked((int)n.ToUInt64()); }
    }
}
