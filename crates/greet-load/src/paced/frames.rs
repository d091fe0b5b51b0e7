//! HTTP/2's framing, as little of it as the h2c loop needs: the frame types and flags it
//! reads and writes, a frame written whole, the client's opening, and a payload's padding
//! taken off.

pub(super) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types.
pub(super) const DATA: u8 = 0;
pub(super) const HEADERS: u8 = 1;
pub(super) const RST_STREAM: u8 = 3;
pub(super) const SETTINGS: u8 = 4;
pub(super) const PING: u8 = 6;
pub(super) const GOAWAY: u8 = 7;
pub(super) const WINDOW_UPDATE: u8 = 8;
pub(super) const CONTINUATION: u8 = 9;

/// Frame flags.
pub(super) const END_STREAM: u8 = 0x1;
pub(super) const ACK: u8 = 0x1;
pub(super) const END_HEADERS: u8 = 0x4;
pub(super) const PADDED: u8 = 0x8;
pub(super) const PRIORITY: u8 = 0x20;

/// The largest window HTTP/2 allows: the client's for every stream, and the connection's.
pub(super) const WINDOW_MAX: u32 = (1 << 31) - 1;

/// A frame's 9-byte header then its payload.
pub(super) fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = payload.len() as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// What the client says first: the preface, its SETTINGS (no dynamic table, no push, the
/// largest stream window) and the connection's window opened as far as it goes.
pub(super) fn opening() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    let mut settings = Vec::new();
    for (id, value) in [(0x1u16, 0u32), (0x2, 0), (0x4, WINDOW_MAX)] {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&value.to_be_bytes());
    }
    frame(&mut out, SETTINGS, 0, 0, &settings);
    let more = WINDOW_MAX - 65_535;
    frame(&mut out, WINDOW_UPDATE, 0, 0, &more.to_be_bytes());
    out
}

/// A DATA or HEADERS frame's payload without its padding (and, for HEADERS, its priority);
/// `None` when the padding does not fit.
pub(super) fn unpadded(flags: u8, payload: &[u8], headers: bool) -> Option<&[u8]> {
    let (mut from, mut to) = (0, payload.len());
    if flags & PADDED != 0 {
        let pad = usize::from(*payload.first()?);
        from = 1;
        to = to.checked_sub(pad)?;
    }
    if headers && flags & PRIORITY != 0 {
        from += 5;
    }
    payload.get(from..to)
}
