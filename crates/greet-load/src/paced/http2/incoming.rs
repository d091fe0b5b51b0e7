//! What comes on an HTTP/2 connection of the open loop: its bytes read, cut into frames, and
//! each frame handled: a stream's HEADERS and DATA gathered into its slot's answer (checked
//! and counted once whole), a refused stream held to go again, the server's stream limit
//! and PINGs from its SETTINGS and PING frames, a GOAWAY's last stream, and the connection's
//! window topped up. Apart from the rest of the engine (`mod.rs`), which opens connections
//! and sends on them.

use std::io::{ErrorKind as IoKind, Read};

use super::super::event::Engine;
use super::super::frames::*;
use super::super::hpack::status_of;
use super::{Looper, Slot, HELD};
use crate::count::ErrorKind;

/// The connection's window is topped up once this much of it is used.
const WINDOW_REFILL: u64 = 1 << 30;
/// RST_STREAM's code for a stream the server did not take up (past its stream limit): safe
/// to send again.
const REFUSED_STREAM: u32 = 0x7;

impl Looper<'_> {
    /// Reads what has come on connection `c`, and handles every whole frame of it.
    pub(super) fn read(&mut self, c: usize) {
        loop {
            let conn = &mut self.conns[c];
            let Some(stream) = conn.stream.as_mut() else {
                return;
            };
            let n = match stream.read(&mut self.scratch[..]) {
                Err(e) if e.kind() == IoKind::WouldBlock => break,
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                Ok(0) | Err(_) if stream.handshaking() => {
                    return self.lost(c, Some(ErrorKind::Connect))
                }
                Ok(0) => return self.lost(c, None),
                Ok(n) => n,
                Err(_) => return self.lost(c, None),
            };
            if let Some(opened) = self.slots[conn.connecting.1].opened.as_mut() {
                stream.handshaken(opened);
            }
            conn.input.extend_from_slice(&self.scratch[..n]);
            let input = std::mem::take(&mut conn.input);
            let mut at = 0;
            while let Some(head) = input.get(at..at + 9) {
                let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
                let Some(payload) = input.get(at + 9..at + 9 + len) else {
                    break;
                };
                let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & WINDOW_MAX;
                if !self.frame(c, head[3], head[4], id, payload) {
                    return self.lost(c, Some(ErrorKind::Io));
                }
                at += 9 + len;
            }
            let conn = &mut self.conns[c];
            conn.input = input;
            conn.input.drain(..at);
        }
        self.settle(c);
        // What the frames asked for: SETTINGS and PING acknowledged, the window topped up.
        self.flush();
    }

    /// Handles one frame on connection `c`; false when the connection cannot go on.
    fn frame(&mut self, c: usize, kind: u8, flags: u8, id: u32, payload: &[u8]) -> bool {
        let streams = self.streams;
        let slot_of = |slots: &[Slot], id: u32| {
            (c * streams..((c + 1) * streams).min(slots.len()))
                .find(|&s| id != 0 && slots[s].stream == Some(id))
        };
        let conn = &mut self.conns[c];
        match kind {
            DATA | HEADERS => {
                let Some(body) = unpadded(flags, payload, kind == HEADERS) else {
                    return false;
                };
                if kind == DATA {
                    conn.used += payload.len() as u64;
                    if conn.used >= WINDOW_REFILL {
                        let more = conn.used as u32;
                        frame(&mut conn.out, WINDOW_UPDATE, 0, 0, &more.to_be_bytes());
                        conn.used = 0;
                        self.dirty.push(c);
                    }
                }
                if kind == HEADERS && flags & END_HEADERS == 0 {
                    conn.continuing = Some(id);
                }
                // A stream no slot waits on any more (timed out): its frames are let be.
                let Some(s) = slot_of(&self.slots, id) else {
                    return true;
                };
                let slot = &mut self.slots[s];
                if kind == DATA {
                    slot.body.extend_from_slice(body);
                } else if slot.status < 200 {
                    // The final status, after any 1xx (an informational answer is followed
                    // by the real one on the same stream).
                    slot.status = status_of(body);
                }
                if flags & END_STREAM != 0 {
                    if kind == HEADERS && flags & END_HEADERS == 0 {
                        slot.ends_with_headers = true;
                    } else {
                        self.answered(s);
                    }
                }
            }
            CONTINUATION if flags & END_HEADERS != 0 => {
                let ended = conn.continuing.take() == Some(id);
                let s =
                    slot_of(&self.slots, id).filter(|&s| ended && self.slots[s].ends_with_headers);
                if let Some(s) = s {
                    self.answered(s);
                }
            }
            RST_STREAM => {
                let refused = payload == REFUSED_STREAM.to_be_bytes();
                if let Some(s) = slot_of(&self.slots, id) {
                    if refused && !self.slots[s].retried {
                        // Not taken up: held, to go again once there is room.
                        conn.open = conn.open.saturating_sub(1);
                        self.slots[s].retried = true;
                        self.slots[s].stream = Some(HELD);
                    } else {
                        self.finish(s, Err(ErrorKind::Io));
                    }
                }
            }
            SETTINGS if flags & ACK == 0 => {
                for setting in payload.chunks_exact(6) {
                    if setting[..2] == [0, 3] {
                        let limit = [setting[2], setting[3], setting[4], setting[5]];
                        conn.limit = u32::from_be_bytes(limit) as usize;
                    }
                }
                frame(&mut conn.out, SETTINGS, ACK, 0, &[]);
                self.dirty.push(c);
            }
            PING if flags & ACK == 0 => {
                frame(&mut conn.out, PING, ACK, 0, payload);
                self.dirty.push(c);
            }
            GOAWAY => {
                let Some(last) = payload.get(..4) else {
                    return false;
                };
                let last = u32::from_be_bytes([last[0], last[1], last[2], last[3]]) & WINDOW_MAX;
                conn.goaway = Some(last);
            }
            _ => {}
        }
        true
    }

    /// Slot `s`'s answer is whole: checked and counted.
    fn answered(&mut self, s: usize) {
        self.conns[s / self.streams].answered = true;
        let slot = &self.slots[s];
        let checked = self.check.bytes(slot.status, &slot.body);
        self.finish(s, checked);
    }
}
