//! Program metadata through the safe crate: set, read, saved and loaded back, kept by grad,
//! removed, and the errors naming the key and the limit.
use shapepoly::{Code, DType, Program, Scope};

fn small() -> Program {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "n, 3").unwrap();
    let y = x
        .tanh()
        .unwrap()
        .reduce(shapepoly::ReduceOp::Sum, &[], false)
        .unwrap();
    scope.program(&[x], &[("y", y)]).unwrap()
}

#[test]
fn metadata_is_saved_with_the_program() {
    let p = small();
    assert!(p.metadata().is_empty());
    let q = p
        .with_metadata("onnx.names", Some("{\"inputs\": {}}"))
        .unwrap()
        .with_metadata("author", Some("\u{e9}t\u{e9}"))
        .unwrap();
    assert!(p.metadata().is_empty()); // programs are immutable
    let want = vec![
        ("author".to_string(), "\u{e9}t\u{e9}".to_string()),
        ("onnx.names".to_string(), "{\"inputs\": {}}".to_string()),
    ];
    assert_eq!(q.metadata(), want);
    let loaded = Program::load(&q.serialize().unwrap()).unwrap();
    assert_eq!(loaded.metadata(), want);
    assert_eq!(
        loaded.metadata_value("author").as_deref(),
        Some("\u{e9}t\u{e9}")
    );
    assert_eq!(loaded.metadata_value("missing"), None);
    let grad = loaded.grad("y", &["x"]).unwrap();
    assert_eq!(grad.metadata(), want);
    let none = loaded
        .with_metadata("author", None)
        .unwrap()
        .with_metadata("onnx.names", None)
        .unwrap();
    assert_eq!(none.serialize().unwrap(), p.serialize().unwrap());
}

#[test]
fn metadata_errors_name_the_key_and_the_limit() {
    let p = small();
    let e = p.with_metadata("", Some("v")).err().unwrap();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("key must not be empty"),
        "{}",
        e.message()
    );
    let e = p.with_metadata(&"k".repeat(257), Some("v")).err().unwrap();
    assert!(
        e.message().contains("above the limit of 256"),
        "{}",
        e.message()
    );
    let big = "v".repeat((1 << 20) + 1);
    let e = p.with_metadata("k", Some(&big)).err().unwrap();
    assert!(
        e.message().contains("above the limit of 1048576"),
        "{}",
        e.message()
    );
    let e = p.with_metadata("k", Some("a\0b")).err().unwrap();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("NUL"), "{}", e.message());
}
