//! Structured explanations on errors (issue 14): an inconclusive comparison's `Error` carries
//! witnesses (whether each makes the comparison true, and the variables' values) and verified
//! fixes, copied out of the C error; other errors carry none.
use shapepoly::{Cmp, Code, DType, Error, Scope, Truth};

#[test]
fn guard_without_hint_has_two_witnesses_and_fixes() {
    let scope = Scope::new(&[]).unwrap();
    let n = scope.dim("n").unwrap();
    let five = scope.dim("5").unwrap();
    let err = n.guard(Cmp::Ge, five, None).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    let w = err.witnesses();
    assert_eq!(w.len(), 2, "{}", err);
    assert!(w[0].holds, "the true witness comes first: {:?}", w);
    assert!(!w[1].holds, "{:?}", w);
    for witness in w {
        assert_eq!(witness.values.len(), 1, "{:?}", witness);
        assert_eq!(witness.values[0].0, "n");
        let v = witness.value("n").unwrap();
        assert_eq!(witness.value("m"), None);
        assert!(v >= 1, "n's default range is [1, inf]: {}", v);
        assert_eq!(v >= 5, witness.holds, "{:?}", witness);
        let said = format!(
            "n = {} makes it {}",
            v,
            if witness.holds { "true" } else { "false" }
        );
        assert!(err.message().contains(&said), "{} lacks {}", err, said);
    }
    assert!(!err.fixes().is_empty(), "{}", err);
    for fix in err.fixes() {
        assert!(!fix.is_empty());
        assert!(
            err.message().contains(fix.as_str()),
            "{} lacks {}",
            err,
            fix
        );
    }
    // The details survive a clone and take part in equality.
    let copy = err.clone();
    assert_eq!(copy, err);
    assert_ne!(Error::new(err.code(), err.message()), err);

    // A listed constraint fix really decides the comparison.
    let fix = err
        .fixes()
        .iter()
        .find_map(|f| {
            f.strip_prefix("add the constraint '")
                .and_then(|r| r.split('\'').next())
        })
        .unwrap_or_else(|| panic!("no constraint fix in {:?}", err.fixes()));
    let fixed = Scope::new(&[fix]).unwrap();
    let n2 = fixed.dim("n").unwrap();
    assert_eq!(
        n2.compare(Cmp::Ge, fixed.dim("5").unwrap()).unwrap(),
        Truth::True
    );
}

#[test]
fn tracing_shape_check_offers_max_in_the_spec() {
    let scope = Scope::new(&[]).unwrap();
    let x = scope.input("x", DType::F32, "a, 3").unwrap();
    let y = scope.input("y", DType::F32, "b, 3").unwrap();
    let err = x.add(y).unwrap_err();
    assert_eq!(err.code(), Code::Inconclusive, "{}", err);
    assert_eq!(err.witnesses().len(), 2, "{}", err);
    assert!(
        err.fixes().iter().any(|f| f.contains("max(a, b)")),
        "{:?}",
        err.fixes()
    );
}

#[test]
fn other_errors_have_no_details() {
    let scope = Scope::new(&[]).unwrap();
    let err = scope.dim("2 *").unwrap_err();
    assert_eq!(err.code(), Code::ParseError);
    assert!(err.witnesses().is_empty());
    assert!(err.fixes().is_empty());
    let made = Error::new(Code::Inconclusive, "made here");
    assert!(made.witnesses().is_empty());
    assert!(made.fixes().is_empty());
}
