// Program metadata: string key/value pairs saved with the program (shp_program_metadata_*).
using System;
using System.Collections.Generic;

namespace ShapePoly
{
    public sealed partial class Program
    {
        /// <summary>The program's metadata (shp_program_metadata_*): string pairs saved with
        /// the program, such as an imported ONNX model's names (<c>onnx.names</c>), in increasing
        /// byte order of the keys. Transformations (Jvp, Vjp, Grad, Vmap) keep it.</summary>
        public IReadOnlyList<KeyValuePair<string, string>> Metadata
        {
            get
            {
                var h = Handle;
                int n = Sizes.I(NativeMethods.shp_program_metadata_count(h));
                var r = new KeyValuePair<string, string>[n];
                for (int i = 0; i < n; i++)
                {
                    string key = Utf8.Decode(NativeMethods.shp_program_metadata_key(h, Sizes.U(i)));
                    r[i] = new KeyValuePair<string, string>(key, MetadataValue(key));
                }
                return r;
            }
        }

        /// <summary>The value of metadata key <paramref name="key"/>, or null when the program
        /// has no such key.</summary>
        public string MetadataValue(string key)
        {
            if (key == null) throw new ArgumentNullException("key");
            if (key.IndexOf('\0') >= 0) return null;  // no key has a NUL character
            return Utf8.Decode(NativeMethods.shp_program_metadata_value(Handle, Utf8.Encode(key)));
        }

        /// <summary>A copy of the program whose metadata has <paramref name="key"/> set to
        /// <paramref name="value"/>, or without the key when <paramref name="value"/> is null
        /// (shp_program_with_metadata; this program is unchanged). A key is non-empty printable
        /// UTF-8 of at most 256 bytes, a value at most 1 MiB of UTF-8, at most 1024 entries:
        /// otherwise an InvalidArgument <see cref="ShapePolyException"/> names the key and the
        /// limit.</summary>
        public Program WithMetadata(string key, string value)
        {
            if (key == null) throw new ArgumentNullException("key");
            if (key.IndexOf('\0') >= 0 || (value != null && value.IndexOf('\0') >= 0))
                throw new ArgumentException("the metadata key or value of '" + key.Replace("\0", "\\0") +
                                            "' contains a NUL character", value == null ? "key" : "value");
            IntPtr p;
            ShapePolyException.Check(NativeMethods.shp_program_with_metadata(Handle, Utf8.Encode(key), Utf8.Encode(value), out p));
            return new Program(new ProgramHandle(p));
        }
    }
}
