//! The command line's parser for the library's named values ([`rxpipe::named::Named`]): the
//! library lists the names, clap shows and checks them.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rxpipe::named::Named;

/// A clap value parser for `T`: each value's first name is shown in the help, the others are
/// taken as aliases.
pub fn named<T: Named>() -> impl TypedValueParser<Value = T> {
    let values = T::NAMES
        .iter()
        .map(|n| PossibleValue::new(n[0]).aliases(n[1..].iter().copied()));
    PossibleValuesParser::new(values)
        .map(|s| T::from_name(&s).expect("every listed name parses (rxpipe's names test)"))
}
