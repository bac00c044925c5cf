# Offline shim for @rules_cc: Bazel 4.2.3 (Debian bazel-bootstrap) would otherwise try to
# download rules_cc. It only re-exports the native C++ rules built into Bazel 4.2.3.
def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)
