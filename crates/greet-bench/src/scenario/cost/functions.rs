//! The functions a count names, in a table's few words: a symbol shortened, and what glibc's
//! string routines do to memory (where valgrind's count of them overstates the cost).

/// A function's name, short enough for a table: `<Type as Trait>::f` as `Type::f`, generics
/// left out, its last three path segments.
pub(super) fn short_function(name: &str) -> String {
    let name = match name.strip_prefix('<') {
        Some(inner) => {
            // The `>` that closes the leading `<`.
            let mut depth = 1;
            let close = inner.char_indices().find_map(|(i, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            match close {
                Some(at) => {
                    let ty = inner[..at].split(" as ").next().unwrap_or_default();
                    format!("{ty}{}", &inner[at + 1..])
                }
                None => name.to_owned(),
            }
        }
        None => name.to_owned(),
    };
    let mut out = String::new();
    let mut depth = 0;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let segments: Vec<&str> = out.split("::").collect();
    let tail = segments[segments.len().saturating_sub(3)..].join("::");
    match tail.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &tail[..cut]),
        None => tail,
    }
}

/// What glibc's string routine `function` does to memory, where it is one: `filling`
/// (memset) or `copying` (memcpy, memmove).
pub(super) fn string_routine(function: &str) -> Option<&'static str> {
    if function.contains("memset") {
        Some("filling")
    } else if function.contains("memcpy") || function.contains("memmove") {
        Some("copying")
    } else {
        None
    }
}
