//! The byte stream async-smtp talks through, with three things the library does not do itself:
//!
//! 1. **Replies as real servers send them.** async-smtp 0.10's reply parser wants every line as
//!    `NNN SP text CRLF` (or `NNN-text CRLF`). RFC 5321 §4.2 makes the text optional, and servers
//!    also answer with bare LF or a stray blank line first; the library then returns
//!    `Err(Parsing(Tag))` for a message the server has *accepted*. Every line received is read
//!    here first ([`normalize_reply_line`]): blank lines are dropped, a bare `250` gets its
//!    optional space, line ends become CR LF. The library's own parser still decides; this is a
//!    thin reader in front of it, not a second SMTP client. (The alternatives were a fork pinned
//!    in Cargo.lock — only crates.io is reachable, and a fork of the parser would be the same few
//!    lines with a maintenance burden — or an option upstream, which 0.10 does not have.)
//! 2. **Which command a reply answers.** Every command line the library writes is noted (MAIL FROM,
//!    RCPT TO, DATA, the final `.` …) and each complete reply is matched to the oldest command
//!    still waiting for one, so a refusal is classified by the command it refused and a lost
//!    connection is known to be before or after the final dot ([`Transcript`]). The library runs
//!    without PIPELINING, so each reply answers the command just before it.
//! 3. **A time limit per step** (RFC 5321 §4.5.3.2): the wait for each reply is bounded by the
//!    limit of the command it answers ([`SmtpTimeouts::reply_ms`]), a write that does not complete
//!    by the data-block or command limit. A deadline that fires ends the read or write with
//!    `io::ErrorKind::TimedOut` and is noted in the transcript.
//!
//! It holds no worker types, so host tests drive the real library through it.

use crate::domain::outbox::smtp::{
    hand_over, normalize_reply_line, HandOver, Reply, ReplyLine, SmtpCommand, SmtpTimeouts,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};

/// A timer: resolves after the given number of milliseconds (every deadline on the wire and of
/// the conversation runs on one).
pub type Timer = dyn Fn(u64) -> Pin<Box<dyn Future<Output = ()>>>;

/// Longest reply line accepted, bytes (RFC 5321 §4.5.3.1.5 allows 512; servers exceed it).
pub const MAX_REPLY_LINE: usize = 4_096;
/// Most lines in one reply (a long EHLO answer has a dozen).
pub const MAX_REPLY_LINES: usize = 200;

/// What happened on the wire so far, shared by the stream(s) of one conversation (the plain one
/// and, after STARTTLS, the TLS one) and read by the caller when the library gives up.
#[derive(Debug, Default)]
pub struct Transcript {
    /// Commands written whose reply has not been read yet, oldest first.
    pending: VecDeque<SmtpCommand>,
    /// The last complete reply and the command it answered.
    pub last_reply: Option<(SmtpCommand, Reply)>,
    /// The message's final `.` was written.
    pub dot_written: bool,
    /// The reply to the final `.` (whatever its code), once read.
    pub final_reply: Option<Reply>,
    /// A deadline fired: while waiting for the reply to this command (or writing it), after this
    /// many ms.
    pub timed_out: Option<(SmtpCommand, u64)>,
}

impl Transcript {
    /// The command whose reply is awaited now (the oldest still unanswered), if any.
    pub fn awaited(&self) -> Option<SmtpCommand> {
        self.pending.front().copied()
    }

    /// What the server's answer to the final `.` (or its absence) says about the message.
    pub fn hand_over(&self) -> HandOver {
        hand_over(self.dot_written, self.final_reply.as_ref())
    }

    /// The final `.` went out and no reply to it came: the server may have the message.
    pub fn lost_after_dot(&self) -> bool {
        self.hand_over() == HandOver::Unknown
    }
}

/// A shared handle on a conversation's [`Transcript`].
pub type SharedTranscript = Rc<RefCell<Transcript>>;

type Deadline<'t> = Pin<Box<dyn Future<Output = ()> + 't>>;

/// A stream with tolerant reply reading, command tracking and per-step deadlines (module docs).
pub struct Wire<'t, S> {
    inner: S,
    log: SharedTranscript,
    timer: &'t Timer,
    timeouts: SmtpTimeouts,
    /// The current normalized line, handed to the library's reader from `out_pos`.
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes of the line being received.
    raw: Vec<u8>,
    /// Text of the lines of the reply being received.
    reply_lines: Vec<String>,
    read_deadline: Option<Deadline<'t>>,
    write_deadline: Option<Deadline<'t>>,
    /// The command line being written (command mode).
    line: Vec<u8>,
    /// Writes are message data (after a `354`), until the final `.`.
    in_data: bool,
    /// The last bytes of the data written (to see the final `CRLF . CRLF`).
    tail: Vec<u8>,
}

impl<'t, S> Wire<'t, S> {
    /// Wraps `inner`. With `expect_greeting`, the first reply read is the server's greeting.
    pub fn new(
        inner: S,
        log: SharedTranscript,
        timer: &'t Timer,
        timeouts: SmtpTimeouts,
        expect_greeting: bool,
    ) -> Self {
        if expect_greeting {
            log.borrow_mut().pending.push_back(SmtpCommand::Greeting);
        }
        Wire {
            inner,
            log,
            timer,
            timeouts,
            out: Vec::new(),
            out_pos: 0,
            raw: Vec::new(),
            reply_lines: Vec::new(),
            read_deadline: None,
            write_deadline: None,
            line: Vec::new(),
            in_data: false,
            tail: Vec::new(),
        }
    }

    /// The wrapped stream (e.g. to upgrade it to TLS after STARTTLS).
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Takes one received line: a blank one is dropped; a reply line becomes the next thing the
    /// library reads, and a reply's last line completes it (matched to the oldest waiting command).
    fn accept_line(&mut self, raw: &[u8]) -> io::Result<()> {
        match normalize_reply_line(raw) {
            ReplyLine::Blank => Ok(()),
            ReplyLine::Garbage { bytes } => {
                self.out = bytes;
                self.out_pos = 0;
                Ok(())
            }
            ReplyLine::Reply {
                bytes,
                code,
                text,
                last,
            } => {
                self.out = bytes;
                self.out_pos = 0;
                self.reply_lines.push(text);
                if self.reply_lines.len() > MAX_REPLY_LINES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("a reply of more than {MAX_REPLY_LINES} lines"),
                    ));
                }
                if last {
                    let reply = Reply::from_lines(code, &std::mem::take(&mut self.reply_lines));
                    let mut log = self.log.borrow_mut();
                    let command = log.pending.pop_front().unwrap_or(SmtpCommand::Other);
                    // The library writes the message after any positive reply to DATA (354, or
                    // a server's odd 2xx): so does this reader's notion of data mode.
                    if command == SmtpCommand::Data && (200..400).contains(&code) {
                        self.in_data = true;
                        self.tail.clear();
                    }
                    if command == SmtpCommand::EndOfData {
                        log.final_reply = Some(reply.clone());
                    }
                    // The goodbye after a refusal (`QUIT`) must not hide the refusal: the reply
                    // the caller reads is the last one that answered the transaction.
                    if command != SmtpCommand::Quit {
                        log.last_reply = Some((command, reply));
                    }
                    self.read_deadline = None;
                }
                Ok(())
            }
        }
    }

    /// Notes what the library wrote: command lines (each waits for a reply) and, in data mode, the
    /// final `CRLF . CRLF`.
    fn observe_written(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_data {
                self.tail.push(b);
                if self.tail.len() > 5 {
                    self.tail.remove(0);
                }
                if self.tail == b"\r\n.\r\n" {
                    self.in_data = false;
                    let mut log = self.log.borrow_mut();
                    log.dot_written = true;
                    log.pending.push_back(SmtpCommand::EndOfData);
                }
                continue;
            }
            self.line.push(b);
            if self.line.ends_with(b"\r\n") {
                let mut log = self.log.borrow_mut();
                let in_auth =
                    matches!(&log.last_reply, Some((SmtpCommand::Auth, r)) if r.code == 334);
                let command = SmtpCommand::of_line(&self.line[..self.line.len() - 2], in_auth);
                log.pending.push_back(command);
                // An AUTH continuation answers the challenge; the next line is a command again
                // unless another 334 comes.
                if in_auth {
                    log.last_reply = None;
                }
                self.line.clear();
            }
        }
    }

    /// The command a blocked write belongs to, and its limit.
    fn write_limit(&self) -> (SmtpCommand, u64) {
        if self.in_data {
            (SmtpCommand::Data, self.timeouts.data_block_ms)
        } else {
            (SmtpCommand::Other, self.timeouts.command_ms)
        }
    }

    /// Bounds a write (or flush) that cannot make progress: polls the write deadline, started
    /// at the limit of the command the write belongs to ([`Self::write_limit`]);
    /// `Err(TimedOut)` once it fired.
    #[inline]
    fn check_write_deadline(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let (command, ms) = self.write_limit();
        check_deadline(
            &mut self.write_deadline,
            self.timer,
            &self.log,
            (Waiting::Write, command),
            ms,
            cx,
        )
    }
}

/// Which way a deadline bounds the stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// For the reply to a command.
    Reply,
    /// For a write (of a command line, or of the message in data mode) to make progress.
    Write,
}

/// Polls `deadline` (creating it for `ms` if absent); `Err(TimedOut)` when it fired, noting it.
fn check_deadline<'t>(
    deadline: &mut Option<Deadline<'t>>,
    timer: &'t Timer,
    log: &SharedTranscript,
    (waiting, command): (Waiting, SmtpCommand),
    ms: u64,
    cx: &mut Context<'_>,
) -> io::Result<()> {
    let d = deadline.get_or_insert_with(|| timer(ms));
    if d.as_mut().poll(cx).is_ready() {
        *deadline = None;
        log.borrow_mut().timed_out = Some((command, ms));
        // The reply to DATA (the 354) and the message written after it both belong to DATA: only
        // the direction tells them apart.
        let what = match (waiting, command) {
            (Waiting::Reply, c) => format!("no reply to {}", c.as_str()),
            (Waiting::Write, SmtpCommand::Data) => "no progress writing the message".to_string(),
            (Waiting::Write, _) => "no progress writing a command".to_string(),
        };
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{what} within {ms} ms"),
        ));
    }
    Ok(())
}

impl<S: AsyncBufRead + Unpin> AsyncBufRead for Wire<'_, S> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.out_pos >= this.out.len() {
            match Pin::new(&mut this.inner).poll_fill_buf(cx) {
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok([])) => {
                    // End of stream: the library sees it and reports the reply incomplete.
                    this.read_deadline = None;
                    return Poll::Ready(Ok(&[]));
                }
                Poll::Ready(Ok(buf)) => {
                    let (take, complete) = match buf.iter().position(|&b| b == b'\n') {
                        Some(i) => (i + 1, true),
                        None => (buf.len(), false),
                    };
                    this.raw.extend_from_slice(&buf[..take]);
                    Pin::new(&mut this.inner).consume(take);
                    if this.raw.len() > MAX_REPLY_LINE {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("a reply line longer than {MAX_REPLY_LINE} bytes"),
                        )));
                    }
                    if complete {
                        let raw = std::mem::take(&mut this.raw);
                        this.accept_line(&raw)?;
                    }
                }
                Poll::Pending => {
                    let command = this.log.borrow().awaited().unwrap_or(SmtpCommand::Other);
                    let ms = this.timeouts.reply_ms(command);
                    check_deadline(
                        &mut this.read_deadline,
                        this.timer,
                        &this.log,
                        (Waiting::Reply, command),
                        ms,
                        cx,
                    )?;
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(Ok(&this.out[this.out_pos..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        this.out_pos = (this.out_pos + amt).min(this.out.len());
    }
}

impl<S: AsyncBufRead + Unpin> AsyncRead for Wire<'_, S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let available = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Wire<'_, S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                this.write_deadline = None;
                this.observe_written(&buf[..n]);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                this.check_write_deadline(cx)?;
                Poll::Pending
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(r) => {
                this.write_deadline = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                this.check_write_deadline(cx)?;
                Poll::Pending
            }
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
