//! The real build's client connections, with one header etcdctl gets wrong for h2 rewritten on the way in.
//!
//! When etcdctl dials an endpoint given as a URL itself (`endpoint status`, `hashkv`, `defrag`, anything
//! with `--cluster`), grpc-go sends the HTTP/2 `:authority` pseudo-header as `http://host:port`. etcd's Go
//! server ignores it; the h2 crate under tonic rejects it as a malformed authority and resets the stream
//! (PROTOCOL_ERROR) before fake-etcd sees the request, and h2 has no setting to accept it. So every client
//! connection of the real binary reaches tonic as a [`RewritingStream`], whose [`Rewriter`] relays the
//! client's bytes frame by frame and rewrites `:authority: scheme://host:port` to `host:port`. The server's
//! bytes go back untouched.
//!
//! HPACK makes a header block depend on every block before it on the connection (the dynamic table), so the
//! rewriter decodes the first block of a connection with a decoder that mirrors the client's encoder. A
//! client sends every request of a connection with its channel's authority, so if that block is fine, the
//! connection is relayed byte for byte from then on without decoding anything more (ordinary clients pay
//! for one decoded block per connection). If it needs the fix, every block from then on is decoded and
//! re-encoded by the rewriter's own encoder, whose table starts empty: the first re-encoded block opens with
//! two dynamic table size updates (to 0, which empties the server's table, and back to the default 4096), so
//! that the server's decoder and the rewriter's encoder agree from there on.
//!
//! Real build only: under simulation madsim-tonic passes typed messages and there is no HTTP/2 at all.

use std::io;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
const TYPE_HEADERS: u8 = 0x1;
const TYPE_CONTINUATION: u8 = 0x9;
const FLAG_END_STREAM: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;
/// The largest frame payload a server accepts unless it says otherwise (h2 under tonic does not).
const MAX_FRAME: usize = 16_384;
/// HPACK's default dynamic table size, which the server's decoder uses (tonic does not change it).
const TABLE_SIZE: usize = 4096;
/// How much is read from the client at a time: a connection starts with the small size (so that an idle
/// one holds little: 1,000 silent connections took 78 KiB each with 64 KiB from the start), and the chunk
/// doubles whenever a read fills it, up to the large one.
const READ_CHUNK_FIRST: usize = 4 * 1024;
const READ_CHUNK_MAX: usize = 64 * 1024;

/// A client connection as tonic reads it: bytes from the client pass through a [`Rewriter`] on their way
/// in, bytes from the server go straight to the socket. No task and no extra pipe: the rewriting happens in
/// the read call tonic makes anyway.
pub(super) struct RewritingStream {
    inner: TcpStream,
    rewriter: Rewriter,
    /// Bytes read from the client that do not make a whole frame yet.
    input: Vec<u8>,
    /// Rewritten bytes not yet handed to the server, from `taken` on.
    output: Vec<u8>,
    taken: usize,
    chunk: Box<[u8]>,
    eof: bool,
}

impl RewritingStream {
    pub(super) fn new(inner: TcpStream) -> RewritingStream {
        RewritingStream {
            inner,
            rewriter: Rewriter::default(),
            input: Vec::new(),
            output: Vec::new(),
            taken: 0,
            chunk: vec![0u8; READ_CHUNK_FIRST].into_boxed_slice(),
            eof: false,
        }
    }
}

impl AsyncRead for RewritingStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.taken);
                buf.put_slice(&this.output[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.output.len() {
                    this.output.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // An incomplete last frame is handed on as it is: the server sees what the client sent.
                if this.input.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.output = std::mem::take(&mut this.input);
                continue;
            }
            if this.rewriter.relays_everything() && this.input.is_empty() {
                // Nothing left to look at on this connection: read straight into tonic's buffer.
                return Pin::new(&mut this.inner).poll_read(cx, buf);
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                this.eof = true;
                continue;
            }
            this.input.extend_from_slice(&this.chunk[..n]);
            if n == this.chunk.len() && n < READ_CHUNK_MAX {
                this.chunk = vec![0u8; 2 * n].into_boxed_slice();
            }
            this.output =
                this.rewriter.feed(&mut this.input).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl AsyncWrite for RewritingStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl Connected for RewritingStream {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.inner.connect_info()
    }
}

/// The error of this layer: a header block the rewriter cannot decode after it started re-encoding (it can
/// then neither fix nor pass on the connection, which is closed).
#[derive(Debug, thiserror::Error)]
#[error("HTTP/2 header block does not decode: {0}")]
pub(super) struct RewriteError(String);

/// The sans-IO part: bytes from the client in, bytes for the server out.
#[derive(Default)]
pub(super) struct Rewriter {
    state: Phase,
    /// Mirrors the client's HPACK encoder.
    decoder: Mirror,
    /// Set once the first block needed a fix: every later block is re-encoded by it.
    encoder: Option<hpack::Encoder<'static>>,
    /// A header block whose CONTINUATION frames have not all arrived yet.
    pending: Option<Block>,
}

#[derive(Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Preface,
    Frames,
    /// Not HTTP/2 with prior knowledge, a first block that needs no fix, or one that did not decode before
    /// any re-encoding: everything is relayed as is, and the server answers what it makes of it.
    Passthrough,
}

struct Mirror(hpack::Decoder<'static>);

impl Default for Mirror {
    fn default() -> Mirror {
        Mirror(hpack::Decoder::new())
    }
}

struct Block {
    stream: [u8; 4],
    flags: u8,
    priority: Option<[u8; 5]>,
    fragment: Vec<u8>,
    /// The frames as they arrived, for passing them through unchanged.
    raw: Vec<u8>,
}

impl Rewriter {
    /// Whether every byte from now on goes on unchanged.
    pub(super) fn relays_everything(&self) -> bool {
        self.state == Phase::Passthrough && self.pending.is_none()
    }

    /// Consumes every complete unit at the front of `input` (the preface, whole frames) and returns the
    /// bytes to send on; an incomplete tail stays in `input` for the next call.
    pub(super) fn feed(&mut self, input: &mut Vec<u8>) -> Result<Vec<u8>, RewriteError> {
        let mut out = Vec::with_capacity(input.len());
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.state {
                Phase::Passthrough => {
                    out.extend_from_slice(rest);
                    at = input.len();
                    break;
                }
                Phase::Preface => {
                    let n = rest.len().min(PREFACE.len());
                    if rest[..n] != PREFACE[..n] {
                        self.state = Phase::Passthrough;
                        continue;
                    }
                    if n < PREFACE.len() {
                        break;
                    }
                    out.extend_from_slice(PREFACE);
                    at += PREFACE.len();
                    self.state = Phase::Frames;
                }
                Phase::Frames => {
                    if rest.len() < FRAME_HEADER {
                        break;
                    }
                    let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
                    if rest.len() < FRAME_HEADER + len {
                        break;
                    }
                    let frame = &rest[..FRAME_HEADER + len];
                    at += frame.len();
                    self.frame(frame, &mut out)?;
                }
            }
        }
        input.drain(..at);
        Ok(out)
    }

    fn frame(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), RewriteError> {
        let (kind, flags) = (frame[3], frame[4]);
        let payload = &frame[FRAME_HEADER..];
        match kind {
            TYPE_HEADERS if self.pending.is_none() => {
                let mut start = 0;
                let mut pad = 0;
                if flags & FLAG_PADDED != 0 {
                    pad = *payload.first().unwrap_or(&0) as usize;
                    start = 1;
                }
                let mut priority = None;
                if flags & FLAG_PRIORITY != 0 && payload.len() >= start + 5 {
                    priority = Some(payload[start..start + 5].try_into().expect("5 bytes"));
                    start += 5;
                }
                let end = payload.len().saturating_sub(pad).max(start);
                let block = Block {
                    stream: frame[5..9].try_into().expect("4 bytes"),
                    flags,
                    priority,
                    fragment: payload[start..end].to_vec(),
                    raw: frame.to_vec(),
                };
                self.pending = Some(block);
            }
            TYPE_CONTINUATION if self.pending.is_some() => {
                let block = self.pending.as_mut().expect("checked");
                block.fragment.extend_from_slice(payload);
                block.raw.extend_from_slice(frame);
            }
            _ => {
                // Anything else, including frames that break the CONTINUATION rule, goes on unchanged: the
                // server judges them.
                if let Some(block) = self.pending.take() {
                    out.extend_from_slice(&block.raw);
                }
                out.extend_from_slice(frame);
                return Ok(());
            }
        }
        if flags & FLAG_END_HEADERS != 0 {
            let block = self.pending.take().expect("a block is pending");
            self.finish(block, out)?;
        }
        Ok(())
    }

    fn finish(&mut self, block: Block, out: &mut Vec<u8>) -> Result<(), RewriteError> {
        let decoder = &mut self.decoder.0;
        // The hpack crate panics on some malformed input instead of failing; a panic here is bad input,
        // not a bug of ours, so it is turned into an error.
        let decoded = std::panic::catch_unwind(AssertUnwindSafe(|| decoder.decode(&block.fragment)));
        let headers = match decoded {
            Ok(Ok(headers)) => headers,
            failed => {
                let detail = match failed {
                    Ok(Err(e)) => format!("{e:?}"),
                    _ => "the decoder gave up".to_string(),
                };
                if self.encoder.is_some() {
                    return Err(RewriteError(detail));
                }
                // Nothing was re-encoded yet, so the server's table still matches the client's: pass the
                // block and everything after it through, and let the server answer it.
                out.extend_from_slice(&block.raw);
                self.state = Phase::Passthrough;
                return Ok(());
            }
        };
        let needs_fix = headers.iter().any(|(name, value)| name == b":authority" && fixed(value).is_some());
        if self.encoder.is_none() && !needs_fix {
            out.extend_from_slice(&block.raw);
            // A client sends every request of a connection with the authority of its channel, so a
            // connection that starts well stays well: relaying it without decoding anything more keeps the
            // cost of this layer off every ordinary client.
            self.state = Phase::Passthrough;
            return Ok(());
        }
        let mut encoded = Vec::new();
        if self.encoder.is_none() {
            self.encoder = Some(hpack::Encoder::new());
            encoded.extend(size_update(0));
            encoded.extend(size_update(TABLE_SIZE));
        }
        let headers: Vec<(Vec<u8>, Vec<u8>)> = headers
            .into_iter()
            .map(|(name, value)| {
                let value = if name == b":authority" { fixed(&value).unwrap_or(value) } else { value };
                (name, value)
            })
            .collect();
        let encoder = self.encoder.as_mut().expect("set above");
        encoded.extend(encoder.encode(headers.iter().map(|(n, v)| (&n[..], &v[..]))));
        write_block(&block, &encoded, out);
        Ok(())
    }
}

/// `host:port` for an authority written as a URL (`http://host:port/`), `None` for any other value.
fn fixed(authority: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(authority).ok()?;
    let (_, rest) = text.split_once("://")?;
    Some(rest.trim_end_matches('/').as_bytes().to_vec())
}

/// An HPACK dynamic table size update (RFC 7541 §6.3): `001` and a 5-bit prefix integer.
fn size_update(size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if size < 31 {
        out.push(0x20 | size as u8);
        return out;
    }
    out.push(0x20 | 31);
    let mut rest = size - 31;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
    out
}

/// Writes a re-encoded block as one HEADERS frame and as many CONTINUATION frames as the frame size needs,
/// keeping the stream, END_STREAM and the priority fields, dropping the padding.
fn write_block(block: &Block, encoded: &[u8], out: &mut Vec<u8>) {
    let mut first = Vec::new();
    if let Some(priority) = block.priority {
        first.extend_from_slice(&priority);
    }
    let room = MAX_FRAME - first.len();
    let (head, mut tail) = encoded.split_at(encoded.len().min(room));
    first.extend_from_slice(head);
    let mut flags = block.flags & (FLAG_END_STREAM | FLAG_PRIORITY);
    if tail.is_empty() {
        flags |= FLAG_END_HEADERS;
    }
    push_frame(out, TYPE_HEADERS, flags, block.stream, &first);
    while !tail.is_empty() {
        let (chunk, rest) = tail.split_at(tail.len().min(MAX_FRAME));
        tail = rest;
        let flags = if tail.is_empty() { FLAG_END_HEADERS } else { 0 };
        push_frame(out, TYPE_CONTINUATION, flags, block.stream, chunk);
    }
}

fn push_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: [u8; 4], payload: &[u8]) {
    let len = (payload.len() as u32).to_be_bytes();
    out.extend_from_slice(&len[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream);
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's connection: preface, a SETTINGS frame, then one HEADERS frame per request, encoded by one
    /// HPACK encoder as a client would.
    struct Client {
        encoder: hpack::Encoder<'static>,
        bytes: Vec<u8>,
    }

    impl Client {
        fn new() -> Client {
            let mut bytes = PREFACE.to_vec();
            push_frame(&mut bytes, 0x4, 0, [0; 4], &[]);
            Client { encoder: hpack::Encoder::new(), bytes }
        }

        fn request(&mut self, stream: u8, authority: &str) {
            let headers: [(&[u8], &[u8]); 4] = [
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", b"/etcdserverpb.Maintenance/Status"),
                (b":authority", authority.as_bytes()),
            ];
            let block = self.encoder.encode(headers);
            push_frame(&mut self.bytes, TYPE_HEADERS, FLAG_END_HEADERS, [0, 0, 0, stream], &block);
        }
    }

    /// What the server's decoder makes of the rewritten bytes: the authority of every request.
    fn authorities(mut bytes: &[u8]) -> Vec<String> {
        assert!(bytes.starts_with(PREFACE));
        bytes = &bytes[PREFACE.len()..];
        let mut decoder = hpack::Decoder::new();
        let mut found = Vec::new();
        while !bytes.is_empty() {
            let len = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
            if bytes[3] == TYPE_HEADERS {
                for (name, value) in decoder.decode(&bytes[FRAME_HEADER..FRAME_HEADER + len]).unwrap() {
                    if name == b":authority" {
                        found.push(String::from_utf8(value).unwrap());
                    }
                }
            }
            bytes = &bytes[FRAME_HEADER + len..];
        }
        found
    }

    fn rewrite_in_pieces(bytes: &[u8], piece: usize) -> Vec<u8> {
        let mut rewriter = Rewriter::default();
        let mut input = Vec::new();
        let mut out = Vec::new();
        for chunk in bytes.chunks(piece) {
            input.extend_from_slice(chunk);
            out.extend(rewriter.feed(&mut input).unwrap());
        }
        assert!(input.is_empty(), "a complete stream leaves nothing behind");
        out
    }

    #[test]
    fn good_authorities_pass_through_byte_for_byte() {
        let mut client = Client::new();
        client.request(1, "127.0.0.1:2379");
        client.request(3, "127.0.0.1:2379");
        assert_eq!(rewrite_in_pieces(&client.bytes, 7), client.bytes);
    }

    #[test]
    fn url_authorities_are_rewritten_and_later_blocks_stay_decodable() {
        let mut client = Client::new();
        client.request(1, "http://127.0.0.1:2379");
        // The client now refers to its table entries by index; the server must still read them right.
        client.request(3, "http://127.0.0.1:2379");
        client.request(5, "localhost:2379");
        client.request(7, "http://localhost:2379/");
        for piece in [1, 5, 4096] {
            let out = rewrite_in_pieces(&client.bytes, piece);
            assert_eq!(authorities(&out), ["127.0.0.1:2379", "127.0.0.1:2379", "localhost:2379", "localhost:2379"]);
        }
    }

    /// The assumption that keeps ordinary clients cheap, pinned: a connection whose first request has a
    /// good authority is relayed unchanged from then on, whatever comes later.
    #[test]
    fn a_connection_that_starts_well_is_relayed_unchanged() {
        let mut client = Client::new();
        client.request(1, "127.0.0.1:2379");
        client.request(3, "http://127.0.0.1:2379");
        assert_eq!(rewrite_in_pieces(&client.bytes, 7), client.bytes);
    }

    #[test]
    fn other_protocols_are_relayed_unchanged() {
        let bytes = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        assert_eq!(rewrite_in_pieces(&bytes, 3), bytes);
    }

    #[test]
    fn size_updates_use_the_prefix_integer_encoding() {
        assert_eq!(size_update(0), [0x20]);
        // RFC 7541 C.1.2's integer 1337 with a 5-bit prefix is 31, 154, 10.
        assert_eq!(size_update(1337), [0x3f, 154, 10]);
        assert_eq!(size_update(4096), [0x3f, 0xe1, 0x1f]);
    }
}
