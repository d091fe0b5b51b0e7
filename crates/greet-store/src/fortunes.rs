//! The page `/fortunes` answers: the rows read, one more added, sorted by message, and
//! rendered by a template compiled into the binary (`templates/fortunes.html`, askama) that
//! HTML-escapes every message.

use askama::Template;
use greet_core::records::{Fortune, ADDED_FORTUNE};

#[derive(Template)]
#[template(path = "fortunes.html")]
struct Page<'a> {
    rows: &'a [Fortune],
}

/// The page for `rows` as read: [`ADDED_FORTUNE`] added, all sorted by message.
pub(crate) fn page(mut rows: Vec<Fortune>) -> Result<String, askama::Error> {
    rows.push(Fortune {
        id: ADDED_FORTUNE.0,
        message: ADDED_FORTUNE.1.to_owned(),
    });
    rows.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    Page { rows: &rows }.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use greet_core::records::{FORTUNES, FORTUNES_PAGE};

    #[test]
    fn the_rows_in_any_order_make_the_one_page() {
        let mut rows: Vec<Fortune> = FORTUNES
            .iter()
            .map(|&(id, message)| Fortune {
                id,
                message: message.to_owned(),
            })
            .collect();
        assert_eq!(page(rows.clone()).unwrap(), FORTUNES_PAGE);
        rows.reverse();
        assert_eq!(page(rows).unwrap(), FORTUNES_PAGE);
    }
}
