using System;
using System.Collections.Generic;
using System.Linq;

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

    /// <summary>One variable of an <see cref="ErrorWitness"/> and its value. (A struct, not a
    /// named tuple: mcs loses tuple element names of another assembly inside a list.)</summary>
    public readonly struct WitnessVariable
    {
        public string Name { get; }
        public long Value { get; }
        public WitnessVariable(string name, long value) { Name = name; Value = value; }
        /// <summary>"n = 5".</summary>
        public override string ToString() { return Name + " = " + Value; }
    }

    /// <summary>A witness of an <see cref="ShapePolyCode.Inconclusive"/> error: concrete values
    /// of the dimension variables that satisfy every constraint, check, guard and range of the
    /// scope and make the undecided comparison true (<see cref="Holds"/>) or false. It names the
    /// variables of the comparison and those sharing a fact with them, in the scope's order.</summary>
    public sealed class ErrorWitness
    {
        /// <summary>Whether these values make the comparison true (false: they make it false).</summary>
        public bool Holds { get; }

        /// <summary>The variables and their values, in the scope's variable order.</summary>
        public IReadOnlyList<WitnessVariable> Variables { get; }

        public ErrorWitness(bool holds, IReadOnlyList<WitnessVariable> variables)
        {
            Holds = holds;
            Variables = variables ?? throw new ArgumentNullException(nameof(variables));
        }

        /// <summary>The value of variable <paramref name="name"/>; a name the witness does
        /// not list is a KeyNotFoundException naming the listed ones.</summary>
        public long this[string name]
        {
            get
            {
                foreach (var v in Variables)
                    if (v.Name == name) return v.Value;
                throw new KeyNotFoundException("the witness has no variable '" + name + "' (it lists " +
                    string.Join(", ", Variables.Select(v => v.Name)) + ")");
            }
        }

        /// <summary>"n = 4 makes it true", as the library's message shows it.</summary>
        public override string ToString()
        {
            return string.Join(", ", Variables) +
                (Holds ? " makes it true" : " makes it false");
        }
    }

    /// <summary>An error reported by libshapepoly: its <see cref="Code"/> and the library's
    /// message (which names the offending argument, symbol or constraint). An Inconclusive
    /// error from an undecided comparison also carries <see cref="Witnesses"/> and verified
    /// <see cref="Fixes"/>; a run-time ConstraintViolation may carry fixes. Both are copied
    /// out of the C error, so they outlive it.</summary>
    public class ShapePolyException : Exception
    {
        private static readonly ErrorWitness[] NoWitnesses = new ErrorWitness[0];
        private static readonly string[] NoFixes = new string[0];

        /// <summary>The C error code.</summary>
        public ShapePolyCode Code { get; }

        /// <summary>0 to 2 witnesses (shp_error_witness_*): the one that makes the comparison
        /// true comes first when found. Empty for other errors.</summary>
        public IReadOnlyList<ErrorWitness> Witnesses { get; }

        /// <summary>Verified fixes (shp_error_fix), one sentence each, e.g. "add the constraint
        /// 'n >= 8' when creating the scope". Empty when there are none.</summary>
        public IReadOnlyList<string> Fixes { get; }

        public ShapePolyException(ShapePolyCode code, string message) : this(code, message, null, null) { }

        public ShapePolyException(ShapePolyCode code, string message, IReadOnlyList<ErrorWitness> witnesses,
                                  IReadOnlyList<string> fixes) : base(message)
        {
            Code = code;
            Witnesses = witnesses ?? NoWitnesses;
            Fixes = fixes ?? NoFixes;
        }

        /// <summary>Copies code, message, witnesses and fixes of an owned shp_error_t*, then
        /// destroys it.</summary>
        internal static ShapePolyException FromOwnedError(IntPtr error)
        {
            try
            {
                var code = (ShapePolyCode)NativeMethods.shp_error_code(error);
                var message = Utf8.Decode(NativeMethods.shp_error_message(error));
                int nw = Sizes.I(NativeMethods.shp_error_witness_count(error));
                var witnesses = nw == 0 ? NoWitnesses : new ErrorWitness[nw];
                for (int i = 0; i < nw; i++)
                {
                    var wi = Sizes.U(i);
                    int nv = Sizes.I(NativeMethods.shp_error_witness_variable_count(error, wi));
                    var vars = new WitnessVariable[nv];
                    for (int j = 0; j < nv; j++)
                        vars[j] = new WitnessVariable(Utf8.Decode(NativeMethods.shp_error_witness_variable_name(error, wi, Sizes.U(j))),
                                                      NativeMethods.shp_error_witness_variable_value(error, wi, Sizes.U(j)));
                    witnesses[i] = new ErrorWitness(NativeMethods.shp_error_witness_holds(error, wi), Array.AsReadOnly(vars));
                }
                int nf = Sizes.I(NativeMethods.shp_error_fix_count(error));
                var fixes = nf == 0 ? NoFixes : new string[nf];
                for (int i = 0; i < nf; i++) fixes[i] = Utf8.Decode(NativeMethods.shp_error_fix(error, Sizes.U(i)));
                return new ShapePolyException(code, message, witnesses, fixes);
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
