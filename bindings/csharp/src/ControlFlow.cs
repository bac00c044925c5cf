// Control flow traced from delegates, as JAX writes it: Scope.Cond, Scope.WhileLoop and
// Scope.Scan (shapepoly.h, "Control flow"). Each delegate is traced once, on fresh inputs of its
// operands' types, into a subprogram of the scope (shp_program_create_body). Tensors a delegate
// uses from the enclosing trace (its closures) become operands of the op automatically; the two
// delegates of one op (Cond's branches, WhileLoop's condFn and bodyFn) take the union of their
// captures.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace ShapePoly
{
    public sealed partial class Scope
    {
        /// <summary>A delegate traced on fresh inputs: its program, captures and outputs.</summary>
        private sealed class Body : IDisposable
        {
            private readonly Scope scope;
            private readonly UIntPtr mark;
            internal readonly Tensor[] Inputs;
            internal readonly Tensor[] Outputs;
            internal Program Program;
            internal Tensor[] Captures;

            // specs: (name, like, axis of like to drop or -1).
            internal Body(Scope scope, IList<(string Name, Tensor Like, int DropAxis)> specs, Func<Tensor[], Tensor[]> fn,
                          string what)
            {
                this.scope = scope;
                mark = NativeMethods.shp_scope_trace_mark(scope.Handle);
                Inputs = new Tensor[specs.Count];
                for (int i = 0; i < specs.Count; i++)
                {
                    var dims = new List<Dim>(specs[i].Like.Shape);
                    if (specs[i].DropAxis >= 0) dims.RemoveAt(specs[i].DropAxis);
                    Inputs[i] = scope.Input(specs[i].Name, specs[i].Like.DType, dims.ToArray());
                }
                Outputs = fn((Tensor[])Inputs.Clone());
                if (Outputs == null) throw new ShapePolyException(ShapePolyCode.InvalidArgument, what + " returned null");
                Tensor[] caps;
                Program = Cut(new Tensor[0], out caps);
                Captures = caps;
            }

            /// <summary>shp_program_create_body with <paramref name="given"/> as the first captures.</summary>
            internal Program Cut(Tensor[] given, out Tensor[] captures)
            {
                // Tensors older than the mark, the scope's variables, the given ones: enough.
                int capacity = (int)mark.ToUInt64() + (int)NativeMethods.shp_scope_variable_count(scope.Handle).ToUInt64() +
                               given.Length + 1;
                var caps = new IntPtr[capacity];
                Array.Copy(Tensor.Unwrap(given), caps, given.Length);
                var n = Sizes.U(given.Length);
                var ins = Tensor.Unwrap(Inputs);
                var outs = Tensor.Unwrap(Outputs);
                IntPtr p;
                ShapePolyException.Check(NativeMethods.shp_program_create_body(scope.Handle, mark, ins,
                    Sizes.U(ins.Length), outs, Sizes.U(outs.Length), caps, Sizes.U(capacity), ref n, out p));
                Tensor.KeepAlive(Inputs);
                Tensor.KeepAlive(Outputs);
                var program = new Program(new ProgramHandle(p));
                captures = new Tensor[Sizes.I(n)];
                for (int i = 0; i < captures.Length; i++) captures[i] = new Tensor(caps[i], scope);
                return program;
            }

            /// <summary>The program taking exactly <paramref name="union"/> (a superset of its
            /// captures) as captures; owned by the caller.</summary>
            internal Program WithCaptures(Tensor[] union)
            {
                bool same = union.Length == Captures.Length;
                for (int i = 0; same && i < union.Length; i++) same = union[i].Equals(Captures[i]);
                if (same)
                {
                    var p = Program;
                    Program = null;
                    return p;
                }
                Tensor[] unused;
                return Cut(union, out unused);
            }

            public void Dispose() { if (Program != null) Program.Dispose(); }
        }

        private static List<(string Name, Tensor Like, int DropAxis)> Specs(string prefix, Tensor[] ts)
        {
            var r = new List<(string, Tensor, int)>(ts.Length);
            for (int i = 0; i < ts.Length; i++) r.Add((prefix + i, ts[i], -1));
            return r;
        }

        private static Tensor[] Union(Tensor[] a, Tensor[] b)
        {
            var r = new List<Tensor>(a);
            foreach (var t in b) if (!r.Contains(t)) r.Add(t);
            return r.ToArray();
        }

        private static Tensor[] Concat(Tensor[] a, Tensor[] b)
        {
            var r = new Tensor[a.Length + b.Length];
            a.CopyTo(r, 0);
            b.CopyTo(r, a.Length);
            return r;
        }

        private Tensor[] Results(int count, IntPtr err, IntPtr[] raw)
        {
            ShapePolyException.Check(err);
            var r = new Tensor[count];
            for (int i = 0; i < count; i++) r[i] = new Tensor(raw[i], this);
            return r;
        }

        /// <summary>lax.cond / torch.cond: <paramref name="trueFn"/>(operands) when the bool
        /// scalar <paramref name="pred"/> is true, else <paramref name="falseFn"/>(operands);
        /// only the taken branch runs (shp_tensor_cond). Both branches return the same number of
        /// tensors with the same dtypes and ranks (ShapeMismatch or DTypeMismatch naming both
        /// otherwise; a different count is InvalidArgument); a dim whose sizes are not provably
        /// equal becomes a new data-dependent size (u0, ...) set by the branch that runs. Each
        /// delegate is traced once, on fresh inputs of the operands' types; an exception it
        /// throws propagates unchanged.</summary>
        public Tensor[] Cond(Tensor pred, Func<Tensor[], Tensor[]> trueFn, Func<Tensor[], Tensor[]> falseFn,
                             params Tensor[] operands)
        {
            if (trueFn == null) throw new ArgumentNullException("trueFn");
            if (falseFn == null) throw new ArgumentNullException("falseFn");
            if (operands == null) throw new ArgumentNullException("operands");
            var specs = Specs("operand", operands);
            using (var t = new Body(this, specs, trueFn, "Cond's true branch"))
            using (var f = new Body(this, specs, falseFn, "Cond's false branch"))
            {
                if (t.Outputs.Length != f.Outputs.Length)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument, "Cond: the true branch returns " +
                        t.Outputs.Length + " tensors but the false branch returns " + f.Outputs.Length);
                var caps = Union(t.Captures, f.Captures);
                using (var tp = t.WithCaptures(caps))
                using (var fp = f.WithCaptures(caps))
                {
                    var all = Concat(operands, caps);
                    var ops = Tensor.Unwrap(all);
                    int n = t.Outputs.Length;
                    var raw = new IntPtr[Math.Max(n, 1)];
                    var err = NativeMethods.shp_tensor_cond(Handle, pred.Ptr, tp.Handle, fp.Handle, ops,
                        Sizes.U(ops.Length), raw, Sizes.U(n));
                    GC.KeepAlive(pred.Owner);
                    Tensor.KeepAlive(all);
                    return Results(n, err, raw);
                }
            }
        }

        /// <summary>lax.while_loop: carry = init; while condFn(carry): carry = bodyFn(carry);
        /// returns the final carry (shp_tensor_while_loop). <paramref name="condFn"/> returns a
        /// bool scalar; <paramref name="bodyFn"/> the next carry, each value with the dtype and
        /// (provably) the shape of its initial value. <paramref name="maxTrips"/> &gt;= 0 bounds
        /// the iterations (a run that would exceed it fails with ConstraintViolation); -1:
        /// unbounded.</summary>
        public Tensor[] WhileLoop(Func<Tensor[], Tensor> condFn, Func<Tensor[], Tensor[]> bodyFn, Tensor[] init,
                                  long maxTrips = -1)
        {
            if (condFn == null) throw new ArgumentNullException("condFn");
            if (bodyFn == null) throw new ArgumentNullException("bodyFn");
            if (init == null) throw new ArgumentNullException("init");
            var specs = Specs("carry", init);
            using (var c = new Body(this, specs, carry => new[] { condFn(carry) }, "WhileLoop's condFn"))
            using (var b = new Body(this, specs, bodyFn, "WhileLoop's bodyFn"))
            {
                if (b.Outputs.Length != init.Length)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument, "WhileLoop: bodyFn returns " +
                        b.Outputs.Length + " tensors but the carry has " + init.Length);
                var caps = Union(c.Captures, b.Captures);
                using (var cp = c.WithCaptures(caps))
                using (var bp = b.WithCaptures(caps))
                {
                    var ins = Tensor.Unwrap(init);
                    var consts = Tensor.Unwrap(caps);
                    var raw = new IntPtr[Math.Max(init.Length, 1)];
                    var err = NativeMethods.shp_tensor_while_loop(Handle, cp.Handle, bp.Handle, ins, Sizes.U(ins.Length),
                        consts, Sizes.U(consts.Length), maxTrips, raw, Sizes.U(init.Length));
                    Tensor.KeepAlive(init);
                    Tensor.KeepAlive(caps);
                    return Results(init.Length, err, raw);
                }
            }
        }

        /// <summary>lax.scan: for each slice x of <paramref name="xs"/> along
        /// <paramref name="axis"/> (last to first when <paramref name="reverse"/>):
        /// (carry, y) = f(carry, x); returns the final carry and each y stacked along the axis
        /// (shp_tensor_scan). Every xs has the same (provably equal) size on the axis, the
        /// length, which may be symbolic; <paramref name="length"/> gives it when xs is empty.
        /// f returns the carry (the dtypes and shapes of init) and any number of ys.</summary>
        public (Tensor[] Carry, Tensor[] Ys) Scan(Func<Tensor[], Tensor[], (Tensor[] Carry, Tensor[] Ys)> f,
                                                  Tensor[] init, Tensor[] xs = null, Dim? length = null,
                                                  bool reverse = false, int axis = 0)
        {
            if (f == null) throw new ArgumentNullException("f");
            if (init == null) throw new ArgumentNullException("init");
            if (xs == null) xs = new Tensor[0];
            if (axis < 0) throw new ArgumentOutOfRangeException("axis", axis, "Scan: the axis must be >= 0");
            var specs = Specs("carry", init);
            for (int i = 0; i < xs.Length; i++)
            {
                int rank = xs[i].Rank;
                if (rank <= axis)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument,
                        "Scan: xs[" + i + "] has rank " + rank + ", no axis " + axis + " to scan");
                specs.Add(("x" + i, xs[i], axis));
            }
            int nc = init.Length, carryCount = -1;
            Func<Tensor[], Tensor[]> flat = ins =>
            {
                var carryIn = new Tensor[nc];
                var xIn = new Tensor[ins.Length - nc];
                Array.Copy(ins, carryIn, nc);
                Array.Copy(ins, nc, xIn, 0, xIn.Length);
                var r = f(carryIn, xIn);
                var carry = r.Carry ?? new Tensor[0];
                carryCount = carry.Length;
                return Concat(carry, r.Ys ?? new Tensor[0]);
            };
            using (var b = new Body(this, specs, flat, "Scan's f"))
            {
                if (carryCount != nc)
                    throw new ShapePolyException(ShapePolyCode.InvalidArgument, "Scan: f returns a carry of " +
                        carryCount + " tensors but init has " + nc);
                var ins = Tensor.Unwrap(init);
                var xp = Tensor.Unwrap(xs);
                var consts = Tensor.Unwrap(b.Captures);
                int n = b.Outputs.Length;
                var raw = new IntPtr[Math.Max(n, 1)];
                var err = NativeMethods.shp_tensor_scan(Handle, b.Program.Handle, ins, Sizes.U(ins.Length), xp,
                    Sizes.U(xp.Length), consts, Sizes.U(consts.Length), axis,
                    length.HasValue ? length.Value.Ptr : IntPtr.Zero, reverse, raw, Sizes.U(n));
                Tensor.KeepAlive(init);
                Tensor.KeepAlive(xs);
                if (length.HasValue) GC.KeepAlive(length.Value.Owner);
                var res = Results(n, err, raw);
                var carryOut = new Tensor[nc];
                var ys = new Tensor[n - nc];
                Array.Copy(res, carryOut, nc);
                Array.Copy(res, nc, ys, 0, ys.Length);
                return (carryOut, ys);
            }
        }
    }
}
