//! The `with_` methods of the option structs, written once: `with_methods!` gives a
//! struct one `#[must_use]` setter per field listed (`as Some` for an optional field
//! set to a value), each documented as setting that field.

/// `with_methods!(Type { with_x => x: T, with_y => y as Some: U })`.
macro_rules! with_methods {
    ($ty:ident $(<$lt:lifetime>)? { $($method:ident => $field:ident $(as $wrap:ident)?: $fty:ty),* $(,)? }) => {
        impl$(<$lt>)? $ty$(<$lt>)? {
            $(
                #[doc = concat!("Sets [`", stringify!($ty), "::", stringify!($field), "`].")]
                #[must_use]
                pub fn $method(mut self, value: $fty) -> Self {
                    self.$field = with_methods!(@set $($wrap)? value);
                    self
                }
            )*
        }
    };
    (@set $wrap:ident $value:ident) => {
        $wrap($value)
    };
    (@set $value:ident) => {
        $value
    };
}
