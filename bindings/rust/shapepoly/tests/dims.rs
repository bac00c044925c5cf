//! Scopes, dims, comparisons, bounds, evaluation, shapes and solving.
use shapepoly::{Cmp, Code, Dim, Scope, Truth};

#[test]
fn readme_c_example_in_rust() {
    let scope = Scope::new(&["batch >= 128", "batch <= 1024", "mod(seq, 8) == 0"]).unwrap();
    let e = scope.dim("2*batch + 1").unwrap();
    assert_eq!(e.bounds().unwrap(), (257, 2049));
    let lhs = scope.dim("8*floordiv(seq, 8)").unwrap();
    let seq = scope.dim("seq").unwrap();
    assert_eq!(lhs.compare(Cmp::Eq, seq).unwrap(), Truth::True);
    let b = scope
        .solve(&[("batch, seq", &[256, 64]), ("seq, 2*seq + 1", &[64, 129])])
        .unwrap();
    assert_eq!(b.get("batch"), Some(256));
    assert_eq!(b.get("seq"), Some(64));
    assert_eq!(
        b.to_vec(),
        vec![("batch".to_string(), 256), ("seq".to_string(), 64)]
    );
    assert_eq!(b.len(), 2);
    assert_eq!(b.name(5), None);
    assert_eq!(b.value(5), 0);
}

#[test]
fn arithmetic_operators_and_methods() {
    let scope = Scope::new(&[]).unwrap();
    let n = scope.variable("n").unwrap();
    let m = scope.variable("m").unwrap();
    let e = ((n * 2).unwrap() + 1).unwrap();
    assert_eq!(e.to_string(), "2*n + 1");
    assert_eq!(e, scope.dim("2*n + 1").unwrap()); // interned: identical normal forms are ==
    assert_eq!((2 * n).unwrap(), (n + n).unwrap());
    assert_eq!((n - n).unwrap().as_constant(), Some(0));
    assert_eq!((10 - n).unwrap().to_string(), "-n + 10");
    assert_eq!((-n).unwrap().to_string(), "-n");
    assert_eq!(
        (n * m).unwrap().to_string(),
        scope.dim("m*n").unwrap().to_string()
    );
    assert_eq!(n.pow(2).unwrap().to_string(), "n^2");
    assert_eq!(
        n.floordiv(scope.constant_dim(3).unwrap())
            .unwrap()
            .to_string(),
        "floordiv(n, 3)"
    );
    assert_eq!(
        n.modulo(scope.constant_dim(3).unwrap())
            .unwrap()
            .to_string(),
        "mod(n, 3)"
    );
    assert_eq!(n.max(m).unwrap(), scope.dim("max(n, m)").unwrap());
    assert_eq!(
        n.min(scope.constant_dim(0).unwrap()).unwrap().as_constant(),
        Some(0)
    ); // n >= 1
    assert_eq!(n.constant(7).unwrap().as_constant(), Some(7));
    assert_eq!(n.as_constant(), None);
    assert_eq!(
        scope
            .dim("max(m, 2*n) + floordiv(k, 3)")
            .unwrap()
            .variables()
            .unwrap(),
        ["n", "m", "k"]
    );
    assert!(n.constant(3).unwrap().variables().unwrap().is_empty());
    assert_eq!(format!("{:?}", e), "Dim(2*n + 1)");
    assert_eq!(e.text().unwrap(), "2*n + 1");
    let mut set = std::collections::HashSet::new();
    set.insert(e);
    assert!(set.contains(&scope.dim("1 + n*2").unwrap()));
}

#[test]
fn compare_is_three_valued() {
    let scope = Scope::new(&["n >= 4"]).unwrap();
    let n = scope.dim("n").unwrap();
    let one = scope.constant_dim(1).unwrap();
    assert_eq!(n.compare(Cmp::Gt, one).unwrap(), Truth::True);
    assert_eq!(n.compare(Cmp::Lt, one).unwrap(), Truth::False);
    let eight = scope.constant_dim(8).unwrap();
    assert_eq!(n.compare(Cmp::Ge, eight).unwrap(), Truth::Unknown);
    assert_eq!(n.compare(Cmp::Ge, eight).unwrap().known(), None);
    assert!(n.compare(Cmp::Ne, one).unwrap().is_true());
    assert!(n.compare(Cmp::Eq, one).unwrap().is_false());
    assert_eq!(n.compare(Cmp::Le, n).unwrap().known(), Some(true));
    assert_eq!(n.bounds().unwrap(), (4, i64::MAX));
    let a = scope.dim("2*floordiv(a, 2) + mod(a, 2)").unwrap();
    assert_eq!(
        a.compare(Cmp::Eq, scope.dim("a").unwrap()).unwrap(),
        Truth::True
    );
}

#[test]
fn evaluate() {
    let scope = Scope::new(&[]).unwrap();
    let e = scope.dim("3*a + floordiv(b, 2)").unwrap();
    assert_eq!(e.evaluate(&[("a", 2), ("b", 9)]).unwrap(), 10);
    let err = e.evaluate(&[("a", 2)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err);
    let err = e.evaluate(&[("a", 2), ("b", 9), ("zz", 1)]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{}", err);
}

#[test]
fn ranges_declarations_checks_and_introspection() {
    let scope = Scope::with_ranges(&["n <= 100"], &[("z", 0, 10), ("n", 2, i64::MAX)]).unwrap();
    scope.declare("k", 0, 5).unwrap();
    let vars = scope.variables().unwrap();
    let z = vars.iter().find(|v| v.name == "z").unwrap();
    assert_eq!((z.min, z.max), (0, 10));
    let n = vars.iter().find(|v| v.name == "n").unwrap();
    assert_eq!((n.min, n.max), (2, i64::MAX));
    assert!(vars.iter().any(|v| v.name == "k"));
    assert_eq!(scope.dim("z").unwrap().bounds().unwrap(), (0, 10));
    assert_eq!(scope.dim("n").unwrap().bounds().unwrap(), (2, 100));
    assert_eq!(scope.variable_count(), vars.len());
    assert_eq!(scope.variable_name(1000), None);
    assert_eq!(
        scope.variable_range(1000).unwrap_err().code(),
        Code::InvalidArgument
    );

    // declare after use, twice, or min > max: invalid; contradicting the constraints: unsat.
    assert_eq!(
        scope.declare("n", 3, 4).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        scope.declare("q", 5, 1).unwrap_err().code(),
        Code::InvalidArgument
    );
    let s2 = Scope::new(&["w >= 10"]).unwrap();
    assert_eq!(
        s2.declare("w", 1, 5).unwrap_err().code(),
        Code::Unsatisfiable
    );

    // check: becomes a fact; provably false is unsatisfiable.
    let seq = scope.dim("seq").unwrap();
    let four = scope.constant_dim(4).unwrap();
    let m = seq.modulo(four).unwrap();
    let zero = scope.constant_dim(0).unwrap();
    assert_eq!(m.compare(Cmp::Eq, zero).unwrap(), Truth::Unknown);
    scope
        .check(m, Cmp::Eq, zero, Some("seq must be a multiple of 4"))
        .unwrap();
    assert_eq!(m.compare(Cmp::Eq, zero).unwrap(), Truth::True);
    let facts = scope.constraints();
    assert_eq!(facts.len(), scope.constraint_count());
    assert_eq!(facts[0], "n <= 100");
    assert!(facts.len() == 2 && facts[1].contains("seq"), "{:?}", facts);
    assert_eq!(scope.constraint_text(99), None);
    let err = scope
        .check(four, Cmp::Gt, scope.constant_dim(5).unwrap(), None)
        .unwrap_err();
    assert_eq!(err.code(), Code::Unsatisfiable, "{}", err);
    assert!(format!("{:?}", scope).contains("n <= 100"));
}

#[test]
fn parse_shape() {
    let scope = Scope::new(&[]).unwrap();
    let dims = scope
        .parse_shape("(batch, 2*seq + 1, _, ...)", Some(&[9, 8, 7, 6, 5]))
        .unwrap();
    let text: Vec<String> = dims.iter().map(Dim::to_string).collect();
    assert_eq!(text, ["batch", "2*seq + 1", "7", "6", "5"]);
    assert!(scope.parse_shape("", None).unwrap().is_empty());
    let err = scope.parse_shape("a, _", None).unwrap_err();
    assert_eq!(err.code(), Code::ParseError, "{}", err);
}

#[test]
fn solve_errors() {
    let scope = Scope::new(&["a >= 2"]).unwrap();
    let err = scope.solve(&[("a, 3", &[5, 4])]).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
    let err = scope.solve(&[("a", &[1])]).unwrap_err();
    assert_eq!(err.code(), Code::ConstraintViolation, "{}", err);
    assert!(err.message().contains("a >= 2"), "{}", err);
    let err = scope.solve(&[("a*b", &[12])]).unwrap_err();
    assert_eq!(err.code(), Code::Unsolvable, "{}", err);
    let err = scope.solve(&[("a", &[4, 4])]).unwrap_err();
    assert_eq!(err.code(), Code::ShapeMismatch, "{}", err);
}

/// Every C error code the dim engine produces, reached from Rust.
#[test]
fn error_paths() {
    let err = Scope::new(&["n >= "]).unwrap_err();
    assert_eq!(err.code(), Code::ParseError, "{}", err);
    let err = Scope::new(&["n >= 5", "n <= 2"]).unwrap_err();
    assert_eq!(err.code(), Code::Unsatisfiable, "{}", err);
    let err = Scope::new(&["n\0"]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("NUL"));

    let scope = Scope::new(&[]).unwrap();
    let err = scope.dim("2*+").unwrap_err();
    assert_eq!(err.code(), Code::ParseError);
    assert!(!err.message().is_empty());
    assert!(err.to_string().starts_with("ParseError: "), "{}", err);
    let err = scope.dim("floordiv(a, a - a)").unwrap_err();
    assert_eq!(err.code(), Code::DivisionByZero, "{}", err);
    // A divisor that may be 0 is accepted; evaluating it where it is 0 is DivisionByZero.
    let q = scope.dim("floordiv(b, a - 1)").unwrap();
    assert_eq!(q.evaluate(&[("a", 3), ("b", 7)]).unwrap(), 3);
    let err = q.evaluate(&[("a", 1), ("b", 7)]).unwrap_err();
    assert_eq!(err.code(), Code::DivisionByZero, "{}", err);
    let big = scope.constant_dim(i64::MAX).unwrap();
    let err = (big + 1).unwrap_err();
    assert_eq!(err.code(), Code::Overflow, "{}", err);
    let err = scope.dim("(a+b+c+d+e)^40").unwrap_err();
    assert_eq!(err.code(), Code::Unsupported, "{}", err);

    let other = Scope::new(&[]).unwrap();
    let a = scope.dim("a").unwrap();
    let b = other.dim("a").unwrap();
    let err = (a + b).unwrap_err();
    assert_eq!(err.code(), Code::ScopeMismatch, "{}", err);
    let err = a.compare(Cmp::Eq, b).unwrap_err();
    assert_eq!(err.code(), Code::ScopeMismatch);
    let err = scope.check(a, Cmp::Eq, b, None).unwrap_err();
    assert_eq!(err.code(), Code::ScopeMismatch);
    let std_err: Box<dyn std::error::Error> = Box::new(err);
    assert!(std_err.to_string().contains("ScopeMismatch"));
}
