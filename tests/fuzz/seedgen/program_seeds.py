# One-off helper (not run in CI; its outputs are committed): crafted seeds for issue 17 in
# tests/fuzz/corpus/program, traced through the C API and then patched.
# Usage: python3 program_seeds.py build/lib/libshapepoly.so tests/fuzz/corpus/program
import ctypes, sys, zlib, struct
L = ctypes.CDLL(sys.argv[1])
out = sys.argv[2]
P = ctypes.c_void_p
for f in ["shp_scope_create","shp_tensor_input","shp_tensor_unary","shp_program_create",
          "shp_program_serialize","shp_tensor_constant","shp_tensor_binary","shp_tensor_select",
          "shp_tensor_convert"]:
    getattr(L, f).restype = P
L.shp_buffer_data.restype = P
L.shp_buffer_size.restype = ctypes.c_size_t
L.shp_error_message.restype = ctypes.c_char_p
def ok(e):
    if e: raise RuntimeError(L.shp_error_message(P(e)))
def scope():
    s = P(); ok(L.shp_scope_create(None, ctypes.c_size_t(0), ctypes.byref(s))); return s
def inp(s, name, dtype, spec):
    t = P(); ok(L.shp_tensor_input(s, name, ctypes.c_int(dtype), spec, ctypes.byref(t))); return t
def program(s, ins, outs):
    p = P()
    ia = (P * len(ins))(*ins); oa = (P * len(outs))(*outs)
    names = (ctypes.c_char_p * len(outs))(*[b"y%d" % i for i in range(len(outs))])
    ok(L.shp_program_create(s, ia, ctypes.c_size_t(len(ins)), oa, names, ctypes.c_size_t(len(outs)), ctypes.byref(p)))
    b = P(); ok(L.shp_program_serialize(p, ctypes.byref(b)))
    return bytearray(ctypes.string_at(L.shp_buffer_data(b), L.shp_buffer_size(b)))
def save(name, data):
    open(out + "/" + name, "wb").write(bytes(data)); print(name, len(data))

# A long elementwise chain (finding 1): 1700 fused ops (the loader fuzzer reads at most 64 KB).
s = scope(); x = inp(s, b"x", 0, b"n"); y = x
for i in range(1700):
    t = P(); ok(L.shp_tensor_unary(ctypes.c_int(0), y, ctypes.byref(t))); y = t
save("crafted-long-chain-1700", program(s, [x], [y]))

# A bool constant byte 2 (finding 9): patch the 0/1 pattern in the serialized constant.
s = scope(); x = inp(s, b"x", 4, b"16")
pattern = bytes([1,0,1,1,0,0,1,0,1,1,1,0,0,1,0,1])
shape = (ctypes.c_int64 * 1)(16); c = P()
ok(L.shp_tensor_constant(s, ctypes.c_int(4), shape, ctypes.c_size_t(1), pattern, ctypes.c_size_t(16), ctypes.byref(c)))
t = P(); ok(L.shp_tensor_binary(ctypes.c_int(8), x, c, ctypes.byref(t)))
d = program(s, [x], [t]); at = d.find(pattern); assert at > 0 and d.find(pattern, at + 1) < 0
d[at + 3] = 2
save("crafted-bool-byte-2", d)

# Rank 65 (finding 4): a rank-64 input whose shape vector claims 65 entries.
s = scope(); x = inp(s, b"x", 0, b", ".join([b"1"] * 63 + [b"n"]))
t = P(); ok(L.shp_tensor_unary(ctypes.c_int(0), x, ctypes.byref(t)))
d = program(s, [x], [t])
n64 = struct.pack("<I", 64); hits = [i for i in range(0, len(d) - 3, 4) if d[i:i+4] == n64]
assert hits, "no vector of 64"
for i in hits: d[i:i+4] = struct.pack("<I", 65)
save("crafted-rank-65", d)

# A small bomb (finding 3): the zlib stream of a 16 KB zero constant (~100 bytes) declared
# as 2^40 bytes.
s = scope(); x = inp(s, b"x", 0, b"4096")
zeros = bytes(4096 * 4); shape = (ctypes.c_int64 * 1)(4096); c = P()
ok(L.shp_tensor_constant(s, ctypes.c_int(0), shape, ctypes.c_size_t(1), zeros, ctypes.c_size_t(len(zeros)), ctypes.byref(c)))
t = P(); ok(L.shp_tensor_binary(ctypes.c_int(0), x, c, ctypes.byref(t)))
d = program(s, [x], [t])
sz = struct.pack("<Q", len(zeros)); at = d.find(sz); assert at > 0
d[at:at+8] = struct.pack("<Q", 1 << 40)
save("crafted-bomb-small", d)
