//! The safe crate wraps the whole C API: every function declared by shapepoly-sys (which its
//! own test checks against shapepoly.h; tools/gen_ffi.py generates them into src/generated.rs)
//! is called somewhere in src/.
const SYS: &str = include_str!("../../shapepoly-sys/src/generated.rs");
const SAFE: &[&str] = &[
    include_str!("../src/lib.rs"),
    include_str!("../src/error.rs"),
    include_str!("../src/scope.rs"),
    include_str!("../src/tensor.rs"),
    include_str!("../src/tensor_ops.rs"),
    include_str!("../src/nn.rs"),
    include_str!("../src/program.rs"),
    include_str!("../src/runtime.rs"),
    include_str!("../src/array.rs"),
    include_str!("../src/autodiff.rs"),
    include_str!("../src/control_flow.rs"),
    include_str!("../src/guards.rs"),
    include_str!("../src/function.rs"),
    include_str!("../src/util.rs"),
];

/// C functions without a safe wrapper yet, each with the reason (none today: a function added
/// to the header goes here only with a reason, until it is wrapped).
const NOT_WRAPPED: &[(&str, &str)] = &[];

#[test]
fn every_c_function_is_wrapped() {
    let declared: Vec<&str> = SYS
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
        .map(|l| &l[..l.find('(').unwrap()])
        .collect();
    assert!(declared.len() > 100, "{}", declared.len());
    let unwrapped: Vec<&&str> = declared
        .iter()
        .filter(|name| !NOT_WRAPPED.iter().any(|(n, _)| n == *name))
        .filter(|name| {
            // A direct call, or the C function argument of a wrapper macro (`dim_binary!`).
            let direct = format!("sys::{}(", name);
            let macro_arg = format!(", {}\n", name);
            !SAFE
                .iter()
                .any(|src| src.contains(&direct) || src.contains(&macro_arg))
        })
        .collect();
    assert!(
        unwrapped.is_empty(),
        "C functions without a safe wrapper: {:?}",
        unwrapped
    );
}
