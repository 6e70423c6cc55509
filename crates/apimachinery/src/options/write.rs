//! `CreateOptions`, `UpdateOptions` and `PatchOptions`: `dryRun`,
//! `fieldManager`, `fieldValidation` and (patch) `force`, validated as
//! kube's `ValidateCreateOptions` and friends do: every problem in one
//! `422`.

use serde_json::Value;

use crate::field::FieldError;
use crate::options::invalid_options;
use crate::options::query::Query;
use crate::status::ApiResult;

/// `fieldValidation`: what to do with unknown or duplicate fields (unset
/// means `Warn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them with a warning.
    #[default]
    Warn,
    /// Fail the request.
    Strict,
}

impl FieldValidation {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldValidation::Ignore => "Ignore",
            FieldValidation::Warn => "Warn",
            FieldValidation::Strict => "Strict",
        }
    }
}

/// kube's `FieldManagerMaxLength`.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// Parsed and validated `CreateOptions`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager` ("" when unset).
    pub field_manager: String,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
}

/// Parsed and validated `UpdateOptions` (the same options as create).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager` ("" when unset).
    pub field_manager: String,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
}

/// Parsed and validated `PatchOptions`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager` ("" when unset; required for apply).
    pub field_manager: String,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// `force` (apply only).
    pub force: Option<bool>,
}

impl CreateOptions {
    /// Parse and validate; `422 CreateOptions.meta.k8s.io "" is invalid`.
    pub fn from_query(q: &Query) -> ApiResult<CreateOptions> {
        let (w, errs) = WriteParams::parse(q, &[]);
        check("CreateOptions", errs)?;
        Ok(CreateOptions {
            dry_run: w.dry_run,
            field_manager: w.field_manager,
            field_validation: w.field_validation,
        })
    }
}

impl UpdateOptions {
    /// Parse and validate; `422 UpdateOptions.meta.k8s.io "" is invalid`.
    pub fn from_query(q: &Query) -> ApiResult<UpdateOptions> {
        let (w, errs) = WriteParams::parse(q, &[]);
        check("UpdateOptions", errs)?;
        Ok(UpdateOptions {
            dry_run: w.dry_run,
            field_manager: w.field_manager,
            field_validation: w.field_validation,
        })
    }
}

impl PatchOptions {
    /// Parse and validate for a patch whose type is apply (`is_apply`) or
    /// not: `force` is forbidden on other patches, `fieldManager` required
    /// on apply; `422 PatchOptions.meta.k8s.io "" is invalid`.
    pub fn from_query(q: &Query, is_apply: bool) -> ApiResult<PatchOptions> {
        let force = q.kube_bool("force");
        let field_manager = q.get("fieldManager").unwrap_or("");
        let mut first = Vec::new();
        if !is_apply && force.is_some() {
            first.push(FieldError::forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        if is_apply && field_manager.is_empty() {
            first.push(FieldError::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
        let (w, errs) = WriteParams::parse(q, &first);
        check("PatchOptions", errs)?;
        Ok(PatchOptions {
            dry_run: w.dry_run,
            field_manager: w.field_manager,
            field_validation: w.field_validation,
            force,
        })
    }
}

/// What create, update and patch share.
struct WriteParams {
    dry_run: bool,
    field_manager: String,
    field_validation: FieldValidation,
}

impl WriteParams {
    /// The options and every validation error, after `first`, in kube's
    /// order: fieldManager, dryRun, fieldValidation.
    fn parse(q: &Query, first: &[FieldError]) -> (WriteParams, Vec<FieldError>) {
        let mut errs = first.to_vec();
        let field_manager = q.get("fieldManager").unwrap_or("").to_string();
        errs.extend(field_manager_errors(&field_manager));
        let values: Vec<String> = q.all("dryRun").into_iter().map(str::to_string).collect();
        let dry_run = dry_run(values, &mut errs);
        let field_validation = match q.get("fieldValidation").unwrap_or("") {
            "" | "Warn" => FieldValidation::Warn,
            "Strict" => FieldValidation::Strict,
            "Ignore" => FieldValidation::Ignore,
            other => {
                errs.push(FieldError::not_supported(
                    "fieldValidation",
                    other,
                    &["", "Ignore", "Strict", "Warn"],
                ));
                FieldValidation::Warn
            }
        };
        (
            WriteParams {
                dry_run,
                field_manager,
                field_validation,
            },
            errs,
        )
    }
}

fn check(kind: &str, errs: Vec<FieldError>) -> ApiResult<()> {
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid_options(kind, &errs))
    }
}

/// `dryRun` values: none is a real write, every one `All` a dry run,
/// anything else kube's `Unsupported value` over the whole list (pushed to
/// `errs`).
pub(crate) fn dry_run(values: Vec<String>, errs: &mut Vec<FieldError>) -> bool {
    if values.is_empty() {
        return false;
    }
    if values.iter().all(|v| v == "All") {
        return true;
    }
    errs.push(FieldError::not_supported(
        "dryRun",
        Value::from(values),
        &["All"],
    ));
    false
}

/// kube's `ValidateFieldManager`: at most 128 bytes, printable characters.
fn field_manager_errors(fm: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if fm.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError::too_long(
            "fieldManager",
            &format!("may not be more than {} bytes", FIELD_MANAGER_MAX_LENGTH),
        ));
    }
    for (i, c) in fm.char_indices() {
        if !is_print(c) {
            errs.push(FieldError::invalid(
                "fieldManager",
                fm,
                &format!("invalid character U+{:04X} (at position {})", c as u32, i),
            ));
        }
    }
    errs
}

/// Go's `unicode.IsPrint`, without Unicode's tables: the space, and no
/// control, other whitespace, format or private-use character.
/// (Unassigned code points pass here; Go rejects them.)
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let u = c as u32;
    let format = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    !(c.is_control() || c.is_whitespace() || format || private)
}

#[cfg(test)]
mod tests;
