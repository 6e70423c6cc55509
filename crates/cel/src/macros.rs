//! The macros kube-apiserver 1.34's CEL environment expands, with cel-go's
//! expansions and error texts: the standard ones (`has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`), the two-variable comprehensions of
//! `ext.TwoVarComprehensions` (`all`, `exists`, `existsOne`/`exists_one`,
//! `transformList`, `transformMap`, `transformMapEntry`) and the optional
//! library's `optMap` / `optFlatMap`.
//!
//! The `cel` crate's own macro set differs from cel-go's (it has a one-variable
//! `existsOne`, other error texts, and binds `optMap`'s target once), so the
//! parser here starts from no macros and gets exactly these.

use cel::common::ast::{operators as ops, CallExpr, ComprehensionExpr, Expr, IdedExpr};
use cel::common::ast::{ListExpr, LiteralValue, MapExpr};
use cel::parser::{Macro, MacroExprHelper, ParseError, Parser};
use cel::Env;
use std::sync::LazyLock;

/// The accumulator variable of every comprehension macro.
const ACCU: &str = "@result";
/// cel-go's legacy accumulator name, also refused as an iteration variable.
const LEGACY_ACCU: &str = "__result__";
/// The iteration variable of `optMap`'s binding comprehension.
const UNUSED: &str = "#unused";
/// The function `transformMap` / `transformMapEntry` insert entries with.
pub const MAP_INSERT: &str = "cel.@mapInsert";

type Expanded = Result<Option<IdedExpr>, ParseError>;
type Target<'a> = &'a mut Option<IdedExpr>;
type Args<'a> = &'a mut Vec<IdedExpr>;

static ENV: LazyLock<Env> = LazyLock::new(kube_env);

/// An environment with exactly kube's macros.
fn kube_env() -> Env {
    let mut env = Env::default();
    let macros = [
        Macro::global(ops::HAS, 1, has),
        Macro::receiver(ops::ALL, 2, |h, t, a| one_var(h, t, a, Quantifier::All)),
        Macro::receiver(ops::EXISTS, 2, |h, t, a| {
            one_var(h, t, a, Quantifier::Exists)
        }),
        Macro::receiver(ops::EXISTS_ONE, 2, |h, t, a| {
            one_var(h, t, a, Quantifier::ExistsOne)
        }),
        Macro::receiver(ops::MAP, 2, map),
        Macro::receiver(ops::MAP, 3, map),
        Macro::receiver(ops::FILTER, 2, filter),
        Macro::receiver(ops::ALL, 3, |h, t, a| two_var(h, t, a, TwoVar::All)),
        Macro::receiver(ops::EXISTS, 3, |h, t, a| two_var(h, t, a, TwoVar::Exists)),
        Macro::receiver("existsOne", 3, |h, t, a| {
            two_var(h, t, a, TwoVar::ExistsOne)
        }),
        Macro::receiver(ops::EXISTS_ONE, 3, |h, t, a| {
            two_var(h, t, a, TwoVar::ExistsOne)
        }),
        Macro::receiver("transformList", 3, |h, t, a| two_var(h, t, a, TwoVar::List)),
        Macro::receiver("transformList", 4, |h, t, a| two_var(h, t, a, TwoVar::List)),
        Macro::receiver("transformMap", 3, |h, t, a| two_var(h, t, a, TwoVar::Map)),
        Macro::receiver("transformMap", 4, |h, t, a| two_var(h, t, a, TwoVar::Map)),
        Macro::receiver("transformMapEntry", 3, |h, t, a| {
            two_var(h, t, a, TwoVar::MapEntry)
        }),
        Macro::receiver("transformMapEntry", 4, |h, t, a| {
            two_var(h, t, a, TwoVar::MapEntry)
        }),
        Macro::receiver("optMap", 2, |h, t, a| opt_map(h, t, a, true)),
        Macro::receiver("optFlatMap", 2, |h, t, a| opt_map(h, t, a, false)),
    ];
    for m in macros {
        // the set above has no duplicates: a failure would be a bug caught by tests
        let _ = env.add_macro(m);
    }
    env
}

/// A parser with kube's macros and CEL's optional syntax.
pub fn parser() -> Parser {
    ENV.parser().enable_optional_syntax(true)
}

/// kube's macros plus `ext.Bindings`' `cel.bind` (environments that add
/// the bindings library, such as DRA's device selectors).
static ENV_WITH_BINDINGS: LazyLock<Env> = LazyLock::new(|| {
    let mut env = kube_env();
    let _ = env.add_macro(Macro::receiver("bind", 3, cel_bind));
    env
});

/// [`parser`] with `cel.bind(var, init, body)`.
pub fn parser_with_bindings() -> Parser {
    ENV_WITH_BINDINGS.parser().enable_optional_syntax(true)
}

/// `cel.bind(var, init, body)`: cel-go's expansion, a comprehension over no
/// elements whose accumulator `var` starts at `init` and whose result is
/// `body`; a receiver other than `cel` is an ordinary call.
fn cel_bind(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>) -> Expanded {
    let is_cel = matches!(t.as_ref().map(|e| &e.expr), Some(Expr::Ident(n)) if n == "cel");
    if !is_cel {
        return Ok(None);
    }
    let var = ident_name(&args[0]).ok_or_else(|| {
        h.new_error(
            args[0].id,
            "cel.bind() variable names must be simple identifiers",
        )
    })?;
    let _ = t.take();
    let body = args.remove(2);
    let init = args.remove(1);
    args.clear();
    let range = list(h, vec![]);
    let cond = boolean(h, false);
    let step = h.next_expr(Expr::Ident(var.clone()));
    Ok(Some(comprehension(
        h,
        range,
        UNUSED.to_string(),
        None,
        &var,
        init,
        cond,
        step,
        body,
    )))
}

fn call(h: &mut MacroExprHelper<'_>, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: None,
        args,
    }))
}

fn member(h: &mut MacroExprHelper<'_>, target: IdedExpr, name: &str) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: Some(Box::new(target)),
        args: vec![],
    }))
}

fn accu(h: &mut MacroExprHelper<'_>) -> IdedExpr {
    h.next_expr(Expr::Ident(ACCU.to_string()))
}

fn boolean(h: &mut MacroExprHelper<'_>, b: bool) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
}

fn int(h: &mut MacroExprHelper<'_>, i: i64) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Int(i.into())))
}

fn list(h: &mut MacroExprHelper<'_>, elements: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::List(ListExpr::new(elements)))
}

#[allow(clippy::too_many_arguments)]
fn comprehension(
    h: &mut MacroExprHelper<'_>,
    range: IdedExpr,
    iter_var: String,
    iter_var2: Option<String>,
    accu_var: &str,
    init: IdedExpr,
    cond: IdedExpr,
    step: IdedExpr,
    result: IdedExpr,
) -> IdedExpr {
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var,
        iter_var2,
        accu_var: accu_var.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    })))
}

/// The receiver of a receiver macro (the parser always passes one).
fn take_target(h: &MacroExprHelper<'_>, t: Target<'_>) -> Result<IdedExpr, ParseError> {
    t.take()
        .ok_or_else(|| h.new_error(0, "macro expected a receiver"))
}

fn ident_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        _ => None,
    }
}

fn has(h: &mut MacroExprHelper<'_>, _t: Target<'_>, args: Args<'_>) -> Expanded {
    let arg = args.remove(0);
    match arg.expr {
        Expr::Select(mut sel) => {
            sel.test = true;
            Ok(Some(h.next_expr(Expr::Select(sel))))
        }
        _ => Err(h.new_error(arg.id, "invalid argument to has() macro")),
    }
}

#[derive(Clone, Copy)]
enum Quantifier {
    All,
    Exists,
    ExistsOne,
}

/// The one-variable iteration variable, checked as cel-go's `MakeAll` etc.
fn one_iter_var(h: &MacroExprHelper<'_>, e: &IdedExpr) -> Result<String, ParseError> {
    let v = ident_name(e).ok_or_else(|| h.new_error(e.id, "argument must be a simple name"))?;
    if v == ACCU || v == LEGACY_ACCU {
        return Err(h.new_error(e.id, "iteration variable overwrites accumulator variable"));
    }
    Ok(v)
}

fn quantifier_parts(
    h: &mut MacroExprHelper<'_>,
    q: Quantifier,
    pred: IdedExpr,
) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr) {
    match q {
        Quantifier::All => {
            let init = boolean(h, true);
            let a = accu(h);
            let cond = call(h, ops::NOT_STRICTLY_FALSE, vec![a]);
            let a = accu(h);
            let step = call(h, ops::LOGICAL_AND, vec![a, pred]);
            (init, cond, step, accu(h))
        }
        Quantifier::Exists => {
            let init = boolean(h, false);
            let a = accu(h);
            let not = call(h, ops::LOGICAL_NOT, vec![a]);
            let cond = call(h, ops::NOT_STRICTLY_FALSE, vec![not]);
            let a = accu(h);
            let step = call(h, ops::LOGICAL_OR, vec![a, pred]);
            (init, cond, step, accu(h))
        }
        Quantifier::ExistsOne => {
            let init = int(h, 0);
            let cond = boolean(h, true);
            let a = accu(h);
            let one = int(h, 1);
            let inc = call(h, ops::ADD, vec![a, one]);
            let a = accu(h);
            let step = call(h, ops::CONDITIONAL, vec![pred, inc, a]);
            let a = accu(h);
            let one = int(h, 1);
            let result = call(h, ops::EQUALS, vec![a, one]);
            (init, cond, step, result)
        }
    }
}

fn one_var(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>, q: Quantifier) -> Expanded {
    let v = one_iter_var(h, &args[0])?;
    let range = take_target(h, t)?;
    let pred = args.remove(1);
    args.clear();
    let (init, cond, step, result) = quantifier_parts(h, q, pred);
    Ok(Some(comprehension(
        h, range, v, None, ACCU, init, cond, step, result,
    )))
}

/// `map(x, f)` and `map(x, p, f)`.
fn map(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>) -> Expanded {
    let v = ident_name(&args[0])
        .ok_or_else(|| h.new_error(args[0].id, "argument is not an identifier"))?;
    if v == ACCU || v == LEGACY_ACCU {
        return Err(h.new_error(
            args[0].id,
            "iteration variable overwrites accumulator variable",
        ));
    }
    let range = take_target(h, t)?;
    let func = args.pop().unwrap_or_default();
    let filter = (args.len() == 2).then(|| args.remove(1));
    args.clear();
    let init = list(h, vec![]);
    let cond = boolean(h, true);
    let a = accu(h);
    let wrapped = list(h, vec![func]);
    let mut step = call(h, ops::ADD, vec![a, wrapped]);
    if let Some(f) = filter {
        let a = accu(h);
        step = call(h, ops::CONDITIONAL, vec![f, step, a]);
    }
    let result = accu(h);
    Ok(Some(comprehension(
        h, range, v, None, ACCU, init, cond, step, result,
    )))
}

fn filter(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>) -> Expanded {
    let v = ident_name(&args[0])
        .ok_or_else(|| h.new_error(args[0].id, "argument is not an identifier"))?;
    if v == ACCU || v == LEGACY_ACCU {
        return Err(h.new_error(
            args[0].id,
            "iteration variable overwrites accumulator variable",
        ));
    }
    let range = take_target(h, t)?;
    let pred = args.remove(1);
    let var = args.remove(0);
    let init = list(h, vec![]);
    let cond = boolean(h, true);
    let a = accu(h);
    let wrapped = list(h, vec![var]);
    let add = call(h, ops::ADD, vec![a, wrapped]);
    let a = accu(h);
    let step = call(h, ops::CONDITIONAL, vec![pred, add, a]);
    let result = accu(h);
    Ok(Some(comprehension(
        h, range, v, None, ACCU, init, cond, step, result,
    )))
}

#[derive(Clone, Copy)]
enum TwoVar {
    All,
    Exists,
    ExistsOne,
    List,
    Map,
    MapEntry,
}

/// cel-go's `extractIterVars`: two distinct simple names, neither the accumulator.
fn two_iter_vars(
    h: &MacroExprHelper<'_>,
    a0: &IdedExpr,
    a1: &IdedExpr,
) -> Result<(String, String), ParseError> {
    let v1 = ident_name(a0).ok_or_else(|| h.new_error(a0.id, "argument must be a simple name"))?;
    let v2 = ident_name(a1).ok_or_else(|| h.new_error(a1.id, "argument must be a simple name"))?;
    if v1 == v2 {
        return Err(h.new_error(a1.id, format!("duplicate variable name: {v1}")));
    }
    for (v, e) in [(&v1, a0), (&v2, a1)] {
        if v == ACCU || v == LEGACY_ACCU {
            return Err(h.new_error(e.id, "iteration variable overwrites accumulator variable"));
        }
    }
    Ok((v1, v2))
}

fn two_var(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>, kind: TwoVar) -> Expanded {
    let (v1, v2) = two_iter_vars(h, &args[0], &args[1])?;
    let range = take_target(h, t)?;
    let mut rest: Vec<IdedExpr> = args.drain(..).skip(2).collect();
    let transform = rest.pop().unwrap_or_default();
    let filter = rest.pop();
    let quantifier = match kind {
        TwoVar::All => Some(Quantifier::All),
        TwoVar::Exists => Some(Quantifier::Exists),
        TwoVar::ExistsOne => Some(Quantifier::ExistsOne),
        _ => None,
    };
    if let Some(q) = quantifier {
        let (init, cond, step, result) = quantifier_parts(h, q, transform);
        return Ok(Some(comprehension(
            h,
            range,
            v1,
            Some(v2),
            ACCU,
            init,
            cond,
            step,
            result,
        )));
    }
    let a = accu(h);
    let (init, mut step) = match kind {
        TwoVar::List => {
            let wrapped = list(h, vec![transform]);
            (list(h, vec![]), call(h, ops::ADD, vec![a, wrapped]))
        }
        TwoVar::Map => {
            let key = h.next_expr(Expr::Ident(v1.clone()));
            let init = h.next_expr(Expr::Map(MapExpr { entries: vec![] }));
            (init, call(h, MAP_INSERT, vec![a, key, transform]))
        }
        _ => {
            let init = h.next_expr(Expr::Map(MapExpr { entries: vec![] }));
            (init, call(h, MAP_INSERT, vec![a, transform]))
        }
    };
    if let Some(f) = filter {
        let a = accu(h);
        step = call(h, ops::CONDITIONAL, vec![f, step, a]);
    }
    let cond = boolean(h, true);
    let result = accu(h);
    Ok(Some(comprehension(
        h,
        range,
        v1,
        Some(v2),
        ACCU,
        init,
        cond,
        step,
        result,
    )))
}

/// cel-go's `optMap` / `optFlatMap`: `t.hasValue() ? [optional.of](<e with
/// v = t.value()>) : optional.none()`, the target written twice.
fn opt_map(h: &mut MacroExprHelper<'_>, t: Target<'_>, args: Args<'_>, wrap: bool) -> Expanded {
    let name = if wrap { "optMap" } else { "optFlatMap" };
    let var = ident_name(&args[0]).ok_or_else(|| {
        h.new_error(
            args[0].id,
            format!("{name}() variable name must be a simple identifier"),
        )
    })?;
    let target = take_target(h, t)?;
    let mapping = args.remove(1);
    args.clear();
    let copy = renumber(h, &target);
    let has_value = member(h, target, "hasValue");
    let value = member(h, copy, "value");
    let range = list(h, vec![]);
    let cond = boolean(h, false);
    let result = h.next_expr(Expr::Ident(var.clone()));
    // cel-go binds `var` as the accumulator: init is the value, result the mapping
    let bound = comprehension(
        h,
        range,
        UNUSED.to_string(),
        None,
        &var,
        value,
        cond,
        result,
        mapping,
    );
    let some = if wrap {
        optional_call(h, "of", vec![bound])
    } else {
        bound
    };
    let none = optional_call(h, "none", vec![]);
    Ok(Some(call(h, ops::CONDITIONAL, vec![has_value, some, none])))
}

fn optional_call(h: &mut MacroExprHelper<'_>, f: &str, args: Vec<IdedExpr>) -> IdedExpr {
    let ns = h.next_expr(Expr::Ident("optional".to_string()));
    h.next_expr(Expr::Call(CallExpr {
        func_name: f.to_string(),
        target: Some(Box::new(ns)),
        args,
    }))
}

/// A copy of `e` with fresh ids (cel-go's `Copy`), so the checker's
/// per-node records stay distinct.
fn renumber(h: &mut MacroExprHelper<'_>, e: &IdedExpr) -> IdedExpr {
    let mut copy = e.clone();
    fresh_ids(h, &mut copy);
    copy
}

fn fresh_ids(h: &mut MacroExprHelper<'_>, e: &mut IdedExpr) {
    use cel::common::ast::EntryExpr;
    e.id = h.next_expr(Expr::Unspecified).id;
    match &mut e.expr {
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref_mut() {
                fresh_ids(h, t);
            }
            c.args.iter_mut().for_each(|a| fresh_ids(h, a));
        }
        Expr::Select(s) => fresh_ids(h, &mut s.operand),
        Expr::List(l) => l.elements.iter_mut().for_each(|x| fresh_ids(h, x)),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                entry.id = h.next_expr(Expr::Unspecified).id;
                if let EntryExpr::MapEntry(me) = &mut entry.expr {
                    fresh_ids(h, &mut me.key);
                    fresh_ids(h, &mut me.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            fresh_ids(h, &mut c.iter_range);
            fresh_ids(h, &mut c.accu_init);
            fresh_ids(h, &mut c.loop_cond);
            fresh_ids(h, &mut c.loop_step);
            fresh_ids(h, &mut c.result);
        }
        _ => {}
    }
}
