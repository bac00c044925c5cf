# Offline shim for @rules_java: never used by this project, but @bazel_tools references it and
# Bazel 4.2.3 would otherwise try to download it. Re-exports the native Java rules.
def java_import(**kwargs):
    native.java_import(**kwargs)

def java_runtime(**kwargs):
    native.java_runtime(**kwargs)

def java_toolchain(**kwargs):
    native.java_toolchain(**kwargs)

def java_binary(**kwargs):
    native.java_binary(**kwargs)

def java_library(**kwargs):
    native.java_library(**kwargs)
