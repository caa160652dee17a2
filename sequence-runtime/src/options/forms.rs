//! How the runtime holds each form of key of `mongo_sequence_rules::for_each_key!`: the type of
//! an option in [`SequenceOptions`](super::SequenceOptions) (owned) and in
//! [`SequenceConfig`](super::SequenceConfig) (`'static`, for a constant), their defaults, and the
//! conversions between them and the rules' `Spec`.

/// The type of a key's option in `SequenceOptions`.
macro_rules! owned_type {
    (text, []) => { String };
    (opt_text, []) => { Option<String> };
    (names, []) => { Vec<String> };
    (copy, [$($ty:tt)*]) => { $($ty)* };
    (into, [$($ty:tt)*]) => { $($ty)* };
    (opt, [$($ty:tt)*]) => { Option<$($ty)*> };
}

/// The type of a key's option in `SequenceConfig`.
macro_rules! static_type {
    (text, []) => { &'static str };
    (opt_text, []) => { Option<&'static str> };
    (names, []) => { &'static [&'static str] };
    (copy, [$($ty:tt)*]) => { $($ty)* };
    (into, [$($ty:tt)*]) => { $($ty)* };
    (opt, [$($ty:tt)*]) => { Option<$($ty)*> };
}

/// The default of a key in `SequenceConfig`.
macro_rules! static_default {
    (opt_text, []) => { None };
    (opt, []) => { None };
    (names, []) => { &[] };
    ($form:ident, [$($default:tt)*]) => { $($default)* };
}

/// A key's value in `SequenceConfig`, as `SequenceOptions` holds it.
macro_rules! to_owned {
    (text, $v:expr) => {
        $v.to_owned()
    };
    (opt_text, $v:expr) => {
        $v.map(str::to_owned)
    };
    (names, $v:expr) => {
        $v.iter().map(|s: &&str| (*s).to_owned()).collect()
    };
    ($form:ident, $v:expr) => {
        $v
    };
}

/// A key's option in `SequenceOptions` as the rules' `Spec` takes it: given only when it
/// differs from its default.
macro_rules! to_spec {
    (text, $v:expr, [$($default:tt)*]) => {
        given($v.as_str(), $($default)*)
    };
    (opt_text, $v:expr, []) => {
        $v.as_deref()
    };
    (names, $v:expr, []) => {
        $v.iter().map(String::as_str).collect()
    };
    (opt, $v:expr, []) => {
        $v
    };
    ($form:ident, $v:expr, [$($default:tt)*]) => {
        given($v, $($default)*)
    };
}

/// The setter of a key's option on `SequenceOptionsBuilder`.
macro_rules! builder_setter {
    ($(#[doc = $doc:literal])* $f:ident: text []) => {
        $(#[doc = $doc])*
        pub fn $f(mut self, value: impl Into<String>) -> Self {
            self.options.$f = value.into();
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: opt_text []) => {
        $(#[doc = $doc])*
        pub fn $f(mut self, value: impl Into<String>) -> Self {
            self.options.$f = Some(value.into());
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: names []) => {
        $(#[doc = $doc])*
        pub fn $f<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
            self.options.$f = values.into_iter().map(Into::into).collect();
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: copy [$($ty:tt)*]) => {
        $(#[doc = $doc])*
        pub fn $f(mut self, value: $($ty)*) -> Self {
            self.options.$f = value;
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: into [$($ty:tt)*]) => {
        $(#[doc = $doc])*
        pub fn $f(mut self, value: impl Into<$($ty)*>) -> Self {
            self.options.$f = value.into();
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: opt [$($ty:tt)*]) => {
        $(#[doc = $doc])*
        pub fn $f(mut self, value: $($ty)*) -> Self {
            self.options.$f = Some(value);
            self
        }
    };
}

/// The `const` setter of a key's option on `SequenceConfig`.
macro_rules! const_setter {
    ($(#[doc = $doc:literal])* $f:ident: opt_text []) => {
        $(#[doc = $doc])*
        pub const fn $f(mut self, value: &'static str) -> Self {
            self.$f = Some(value);
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: opt [$($ty:tt)*]) => {
        $(#[doc = $doc])*
        pub const fn $f(mut self, value: $($ty)*) -> Self {
            self.$f = Some(value);
            self
        }
    };
    ($(#[doc = $doc:literal])* $f:ident: $form:ident [$($ty:tt)*]) => {
        $(#[doc = $doc])*
        pub const fn $f(mut self, value: static_type!($form, [$($ty)*])) -> Self {
            self.$f = value;
            self
        }
    };
}

pub(super) use {
    builder_setter, const_setter, owned_type, static_default, static_type, to_owned, to_spec,
};
