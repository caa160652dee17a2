//! The checked model of the input: the struct, its ID field and its configuration.

use proc_macro2::{Ident, Span};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, Member, PathArguments, Type};

use crate::attr::{self, Errors, StructAttrs};

/// The Rust type of the ID field (for `Option<T>`, of `T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    I64,
    I32,
    U32,
    U64,
    String,
    Uuid,
    ObjectId,
}

impl IdKind {
    /// The ID field types accepted, for messages.
    pub const EXPECTED: &'static str =
        "`i64`, `i32`, `u32`, `u64`, `String`, `Uuid`, `ObjectId`, or `Option` of one of them";

    fn from_ident(ident: &str) -> Option<Self> {
        Some(match ident {
            "i64" => IdKind::I64,
            "i32" => IdKind::I32,
            "u32" => IdKind::U32,
            "u64" => IdKind::U64,
            "String" => IdKind::String,
            "Uuid" => IdKind::Uuid,
            "ObjectId" => IdKind::ObjectId,
            _ => return None,
        })
    }

    pub fn is_integer(self) -> bool {
        matches!(self, IdKind::I64 | IdKind::I32 | IdKind::U32 | IdKind::U64)
    }

    /// The largest value the type holds, for integer kinds (capped at `i64::MAX`).
    pub fn integer_max(self) -> Option<i128> {
        Some(match self {
            IdKind::I64 | IdKind::U64 => i128::from(i64::MAX),
            IdKind::I32 => i128::from(i32::MAX),
            IdKind::U32 => i128::from(u32::MAX),
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            IdKind::I64 => "i64",
            IdKind::I32 => "i32",
            IdKind::U32 => "u32",
            IdKind::U64 => "u64",
            IdKind::String => "String",
            IdKind::Uuid => "Uuid",
            IdKind::ObjectId => "ObjectId",
        }
    }
}

/// The field that receives the ID.
pub struct IdField {
    pub member: Member,
    /// The ID type (inside `Option` if the field is optional).
    pub ty: Type,
    pub optional: bool,
    pub kind: IdKind,
    /// The field's type tokens, for errors about the type.
    pub ty_span: Span,
    /// Whether serde serializes the field with a function of its own (`with`,
    /// `serialize_with`).
    pub serde_with: bool,
    /// Whether the field is stored as `_id` (named so, or renamed by serde).
    pub is_doc_id: bool,
}

/// A field named by `scope`.
pub struct ScopeField {
    pub member: Member,
    /// The name as written in `scope`, which is also the counter key's field name.
    pub name: String,
}

/// The whole checked input.
pub struct Model {
    pub ident: Ident,
    pub attrs: StructAttrs,
    pub id: IdField,
    pub scope: Vec<ScopeField>,
}

/// Builds the model; reports every problem to `errors`. `None` when no model can be built.
pub fn model(input: &DeriveInput, errors: &mut Errors) -> Option<Model> {
    let attrs = attr::struct_attrs(&input.attrs, errors);
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named,
            Fields::Unnamed(_) => {
                errors.at(
                    input.ident.span(),
                    "`SequentialId` needs a struct with named fields, not a tuple struct",
                );
                return None;
            }
            Fields::Unit => {
                errors.at(
                    input.ident.span(),
                    "`SequentialId` needs a struct with named fields, not a unit struct",
                );
                return None;
            }
        },
        Data::Enum(e) => {
            errors.at(
                e.enum_token.span(),
                "`SequentialId` can only be derived for structs with named fields, not enums",
            );
            return None;
        }
        Data::Union(u) => {
            errors.at(
                u.union_token.span(),
                "`SequentialId` can only be derived for structs with named fields, not unions",
            );
            return None;
        }
    };
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "`SequentialId` cannot be derived for generic structs",
        );
        return None;
    }

    let mut marked = Vec::new();
    let mut by_name = None;
    for field in &fields.named {
        let ident = field.ident.clone().expect("named field");
        if let Some(span) = attr::field_is_id(&field.attrs, errors) {
            marked.push((field, span));
        }
        if ident == "_id" || attr::serde_renamed_to_id(&field.attrs) {
            by_name.get_or_insert(field);
        }
    }
    let id_field = match (marked.as_slice(), by_name) {
        ([(field, _)], _) => *field,
        ([], Some(field)) => field,
        ([], None) => {
            errors.at(
                input.ident.span(),
                "no ID field: mark one field with `#[seq(id)]`, or name it `_id`, or give it `#[serde(rename = \"_id\")]`",
            );
            return None;
        }
        ([_, (_, second), ..], _) => {
            errors.at(
                *second,
                "two ID fields: only one field may carry `#[seq(id)]`",
            );
            return None;
        }
    };
    let id = id_field_of(id_field, errors)?;

    let mut scope = Vec::new();
    if let Some(names) = &attrs.scope {
        for lit in &names.value {
            let name = lit.value();
            match fields
                .named
                .iter()
                .find(|f| f.ident.as_ref().is_some_and(|i| i == &name))
            {
                Some(f) => scope.push(ScopeField {
                    member: Member::Named(f.ident.clone().expect("named")),
                    name,
                }),
                None => errors.at(
                    lit.span(),
                    format!(
                        "`scope` names `{name}`, which is not a field of `{}`",
                        input.ident
                    ),
                ),
            }
        }
    }

    Some(Model {
        ident: input.ident.clone(),
        attrs,
        id,
        scope,
    })
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

fn id_field_of(field: &syn::Field, errors: &mut Errors) -> Option<IdField> {
    let member = Member::Named(field.ident.clone().expect("named"));
    let ty_span = field.ty.span();
    let is_doc_id =
        field.ident.as_ref().is_some_and(|i| i == "_id") || attr::serde_renamed_to_id(&field.attrs);
    let unsupported = |errors: &mut Errors, ty: &Type| {
        errors.at(
            ty.span(),
            format!(
                "unsupported ID field type `{}`, expected {}",
                quote::quote!(#ty).to_string().replace(' ', ""),
                IdKind::EXPECTED
            ),
        );
    };
    let (inner, optional) = match last_segment(&field.ty) {
        Some(seg) if seg.ident == "Option" => match &seg.arguments {
            PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
                GenericArgument::Type(t) => (t.clone(), true),
                _ => {
                    unsupported(errors, &field.ty);
                    return None;
                }
            },
            _ => {
                unsupported(errors, &field.ty);
                return None;
            }
        },
        _ => (field.ty.clone(), false),
    };
    let kind = last_segment(&inner)
        .filter(|seg| seg.arguments.is_none())
        .and_then(|seg| IdKind::from_ident(&seg.ident.to_string()));
    let Some(kind) = kind else {
        unsupported(errors, &inner);
        return None;
    };
    Some(IdField {
        member,
        ty: inner,
        optional,
        kind,
        ty_span,
        serde_with: attr::serde_has_with(&field.attrs),
        is_doc_id,
    })
}

/// One piece of a `prefix` pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Literal(String),
    Year4,
    Year2,
    Month,
    Day,
    Hour,
}

impl Piece {
    pub fn is_literal(&self) -> bool {
        matches!(self, Piece::Literal(_))
    }

    /// How many digits the piece renders to (literals: their length).
    pub fn width(&self) -> usize {
        match self {
            Piece::Literal(s) => s.len(),
            Piece::Year4 => 4,
            Piece::Year2 | Piece::Month | Piece::Day | Piece::Hour => 2,
        }
    }
}

/// Parses a `prefix` pattern: runs of `Y`, `M`, `D`, `H` must be one of the tokens `YYYY`, `YY`,
/// `MM`, `DD`, `HH`; text between single quotes, and every other character, is literal.
pub fn parse_prefix(pattern: &str) -> Result<Vec<Piece>, String> {
    if pattern.is_empty() {
        return Err(
            "`prefix` is empty: give a pattern such as \"YYMMDD\" or remove the key".into(),
        );
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut literal = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut quoted = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            quoted = !quoted;
            i += 1;
            continue;
        }
        if quoted || !matches!(c, 'Y' | 'M' | 'D' | 'H') {
            literal.push(c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        let token: String = chars[i..i + run].iter().collect();
        let piece = match token.as_str() {
            "YYYY" => Piece::Year4,
            "YY" => Piece::Year2,
            "MM" => Piece::Month,
            "DD" => Piece::Day,
            "HH" => Piece::Hour,
            _ => {
                return Err(format!(
                    "unknown prefix token `{token}`, expected one of: `YYYY`, `YY`, `MM`, `DD`, `HH` (quote literal text: `'{token}'`)"
                ))
            }
        };
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(piece);
        i += run;
    }
    if quoted {
        return Err("unclosed `'` in `prefix`".into());
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    check_periods(&pieces)?;
    Ok(pieces)
}

/// The rank of a date token (year 1 to hour 4); 0 for literals.
pub fn rank(piece: &Piece) -> u8 {
    match piece {
        Piece::Literal(_) => 0,
        Piece::Year4 | Piece::Year2 => 1,
        Piece::Month => 2,
        Piece::Day => 3,
        Piece::Hour => 4,
    }
}

/// A pattern with a date token must name every coarser unit too (`DD` needs `MM` and a year),
/// or its IDs would repeat.
fn check_periods(pieces: &[Piece]) -> Result<(), String> {
    let Some(finest) = pieces
        .iter()
        .max_by_key(|p| rank(p))
        .filter(|p| rank(p) > 0)
    else {
        return Ok(());
    };
    let has = |r: u8| pieces.iter().any(|p| rank(p) == r);
    let mut missing = Vec::new();
    if !has(1) {
        missing.push(("a year (`YY` or `YYYY`)", "year"));
    }
    if rank(finest) > 2 && !has(2) {
        missing.push(("a month (`MM`)", "month"));
    }
    if rank(finest) > 3 && !has(3) {
        missing.push(("a day (`DD`)", "day"));
    }
    match missing.first() {
        None => Ok(()),
        Some((_, every)) => {
            let token = match finest {
                Piece::Year4 => "YYYY",
                Piece::Year2 => "YY",
                Piece::Month => "MM",
                Piece::Day => "DD",
                _ => "HH",
            };
            let what = missing
                .iter()
                .map(|m| m.0)
                .collect::<Vec<_>>()
                .join(" and ");
            Err(format!(
                "prefix token `{token}` needs {what} in the prefix too, or the same IDs would come back every {every}"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_patterns() {
        assert_eq!(
            parse_prefix("YYMMDD").unwrap(),
            vec![Piece::Year2, Piece::Month, Piece::Day]
        );
        assert_eq!(
            parse_prefix("INV-YYYYMM-").unwrap(),
            vec![
                Piece::Literal("INV-".into()),
                Piece::Year4,
                Piece::Month,
                Piece::Literal("-".into())
            ]
        );
        assert_eq!(
            parse_prefix("'DAY'YYYY").unwrap(),
            vec![Piece::Literal("DAY".into()), Piece::Year4]
        );
        assert!(parse_prefix("YYY").unwrap_err().contains("`YYY`"));
        assert!(parse_prefix("MMDD")
            .unwrap_err()
            .contains("`DD` needs a year"));
        assert!(parse_prefix("YYDDHH")
            .unwrap_err()
            .contains("`HH` needs a month (`MM`)"));
        assert!(parse_prefix("DD.MM.YY").is_ok());
        assert!(parse_prefix("").is_err());
        assert!(parse_prefix("'open").is_err());
    }
}
