//! The little of HPACK the h2c loop needs: the request's header block, built once with no
//! use of either side's dynamic table, and an answer's `:status` read from its block's first
//! field (the client's SETTINGS turned the server's dynamic table off).

use std::net::SocketAddr;

use crate::message::Header;

/// An HPACK integer of `prefix` bits, its first byte or'ed with `first`.
pub(super) fn hpack_int(out: &mut Vec<u8>, first: u8, prefix: u32, mut n: usize) {
    let max = (1usize << prefix) - 1;
    if n < max {
        out.push(first | n as u8);
        return;
    }
    out.push(first | max as u8);
    n -= max;
    while n >= 128 {
        out.push((n % 128) as u8 | 0x80);
        n /= 128;
    }
    out.push(n as u8);
}

/// The request's header block: GET, http (https over `tls`), `:path` and `:authority` as
/// literals without indexing, and `headers` as literals never indexed: the server's table
/// never matters.
pub(super) fn request_block(
    addr: SocketAddr,
    target: &str,
    headers: &[Header],
    tls: bool,
) -> Vec<u8> {
    // The static table's GET, then its http or https.
    let mut block = vec![0x82, if tls { 0x87 } else { 0x86 }];
    for (name, value) in [(4, target.to_owned()), (1, addr.to_string())] {
        hpack_int(&mut block, 0x00, 4, name);
        hpack_int(&mut block, 0x00, 7, value.len());
        block.extend_from_slice(value.as_bytes());
    }
    for header in headers {
        // Literal never indexed, with a literal name.
        block.push(0x10);
        for text in [header.name(), header.value()] {
            hpack_int(&mut block, 0x00, 7, text.len());
            block.extend_from_slice(text.as_bytes());
        }
    }
    block
}

/// Reads an HPACK integer of `prefix` bits at `at`: its value and the index after it.
pub(super) fn read_int(block: &[u8], at: usize, prefix: u32) -> Option<(usize, usize)> {
    let max = (1usize << prefix) - 1;
    let mut n = usize::from(*block.get(at)?) & max;
    let mut i = at + 1;
    if n < max {
        return Some((n, i));
    }
    let mut shift = 0;
    loop {
        let b = *block.get(i)?;
        i += 1;
        n += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 || shift > 28 {
            return Some((n, i));
        }
    }
}

/// The status of a response's header block: `:status` comes first. With no dynamic table
/// it is a static index (200, 204, 206, 304, 400, 404, 500) or a literal with that name. 0
/// when it is neither.
pub(super) fn status_of(block: &[u8]) -> u16 {
    const STATIC: [u16; 7] = [200, 204, 206, 304, 400, 404, 500];
    let mut at = 0;
    // Table size updates (001xxxxx) come before any field.
    while block.get(at).is_some_and(|b| b & 0xe0 == 0x20) {
        match read_int(block, at, 5) {
            Some((_, next)) => at = next,
            None => return 0,
        }
    }
    let Some(&first) = block.get(at) else {
        return 0;
    };
    let field = if first & 0x80 != 0 {
        read_int(block, at, 7)
    } else if first & 0x40 != 0 {
        read_int(block, at, 6)
    } else {
        read_int(block, at, 4)
    };
    let Some((index, next)) = field else {
        return 0;
    };
    if first & 0x80 != 0 {
        return index
            .checked_sub(8)
            .and_then(|i| STATIC.get(i))
            .copied()
            .unwrap_or(0);
    }
    if !(8..=14).contains(&index) {
        return 0;
    }
    let Some(&head) = block.get(next) else {
        return 0;
    };
    let Some((len, from)) = read_int(block, next, 7) else {
        return 0;
    };
    let Some(value) = block.get(from..from + len) else {
        return 0;
    };
    let digits = if head & 0x80 != 0 {
        huffman_digits(value)
    } else {
        std::str::from_utf8(value).ok().map(str::to_owned)
    };
    digits.and_then(|d| d.parse().ok()).unwrap_or(0)
}

/// A Huffman-coded string of digits (RFC 7541, appendix B: '0'–'2' are 5 bits, '3'–'9' 6),
/// `None` when it holds anything else.
fn huffman_digits(coded: &[u8]) -> Option<String> {
    let bits = coded.len() * 8;
    let bit = |i: usize| (coded[i / 8] >> (7 - i % 8)) & 1;
    let take = |at: usize, n: usize| (at..at + n).fold(0u8, |v, i| v << 1 | bit(i));
    let mut out = String::new();
    let mut at = 0;
    while at < bits {
        let left = bits - at;
        // Padding: the EOS code's first bits, all ones, under a byte.
        if left < 8 && (at..bits).all(|i| bit(i) == 1) {
            break;
        }
        if left >= 5 && take(at, 5) <= 2 {
            out.push(char::from(b'0' + take(at, 5)));
            at += 5;
        } else if left >= 6 && (0b011001..=0b011111).contains(&take(at, 6)) {
            out.push(char::from(b'0' + 3 + take(at, 6) - 0b011001));
            at += 6;
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read_as_servers_encode_them() {
        // Static indexes, after a table size update.
        assert_eq!(status_of(&[0x88]), 200);
        assert_eq!(status_of(&[0x20, 0x8d]), 404);
        // RFC 7541's own examples: literals, plain (C.5.1) and Huffman-coded (C.6.1, C.6.2).
        assert_eq!(status_of(b"\x48\x03302"), 302);
        assert_eq!(status_of(&[0x48, 0x82, 0x64, 0x02]), 302);
        assert_eq!(status_of(&[0x48, 0x83, 0x64, 0x0e, 0xff]), 307);
        // Not a status: another field first, a dynamic index, a cut block.
        for block in [&[0x82][..], &[0xbe], &[0x48, 0x83, 0x64], &[]] {
            assert_eq!(status_of(block), 0, "{block:?}");
        }
        let mut long = Vec::new();
        hpack_int(&mut long, 0x00, 7, 300);
        assert_eq!(read_int(&long, 0, 7), Some((300, long.len())));
    }
}
