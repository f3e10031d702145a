//! Values a user names in words (on a command line, in a scene file, in a benchmark's list):
//! each such type lists its names and parses them, so that every front end takes the same words
//! without the library knowing any of them.

/// A value named in words. [`Named::NAMES`] holds, for each value a user can name, its names:
/// the first is the one shown, the rest are aliases. [`Named::from_name`] takes any of them, in
/// any case.
pub trait Named: Sized + Clone + Send + Sync + 'static {
    const NAMES: &'static [&'static [&'static str]];
    fn from_name(name: &str) -> Option<Self>;
}

/// Checks a [`Named`] type's table against its parser: every name and its upper-case form parse,
/// names of different entries give different values, and an unknown word is refused. Returns
/// what is wrong, for the tests of each implementation.
pub fn check_names<T: Named + PartialEq + std::fmt::Debug>() -> Result<(), String> {
    let mut seen: Vec<T> = Vec::new();
    for names in T::NAMES {
        let first =
            T::from_name(names[0]).ok_or_else(|| format!("'{}' does not parse", names[0]))?;
        for n in *names {
            for form in [n.to_string(), n.to_uppercase()] {
                if T::from_name(&form).as_ref() != Some(&first) {
                    return Err(format!("'{form}' is not '{}'", names[0]));
                }
            }
        }
        if seen.contains(&first) {
            return Err(format!("'{}' names a value named before", names[0]));
        }
        seen.push(first);
    }
    match T::from_name("no-such-name") {
        Some(v) => Err(format!("an unknown name parsed as {v:?}")),
        None => Ok(()),
    }
}
