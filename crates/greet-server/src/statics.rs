//! `GET /static/<path>`: the directory the servers serve files from, and the one rule of what
//! in it may be served. The files themselves go out through each crate's file server
//! (tower-http's `ServeFile` on axum and hyper, actix-files' `NamedFile` on actix-web); what
//! they are asked for is [`Statics::resolve`]'s answer, so a path that escapes the directory
//! is refused alike everywhere, however it is spelled or linked.
//!
//! Without `--static-dir` a server serves [`default_set`], written by the first request for a
//! file into a fresh directory under the temp dir and removed when the server stops: 20 files as a small site
//! has them (pages, style sheets, scripts, JSON, SVG and PNG images, an icon, and one 8 MiB
//! download), made by code, so a fresh clone and a `FROM scratch` image have them too.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::UNIX_EPOCH;

/// The files a server serves and where they are. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Statics {
    root: Arc<OnceLock<Option<Root>>>,
}

#[derive(Debug)]
struct Root {
    /// The directory, canonical (no symbolic link, no `..`).
    dir: PathBuf,
    /// Whether it was made here, and goes when the server does.
    made: bool,
}

impl Drop for Root {
    fn drop(&mut self) {
        if self.made {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl Root {
    fn open(dir: PathBuf, made: bool) -> io::Result<Self> {
        let canonical = dir.canonicalize().and_then(|canonical| {
            if canonical.is_dir() {
                Ok(canonical)
            } else {
                Err(io::Error::other("not a directory"))
            }
        });
        match canonical {
            Ok(canonical) => Ok(Self {
                dir: canonical,
                made,
            }),
            Err(err) => Err(io::Error::new(
                err.kind(),
                format!("static dir {}: {err}", dir.display()),
            )),
        }
    }
}

impl Statics {
    /// `dir` (`--static-dir`), which must be a directory (errors name it); or, without one,
    /// [`default_set`], written into a new directory under the temp dir when a request first
    /// needs it (a server whose every start would write 8 MiB is slow to test).
    pub fn open(dir: Option<&Path>) -> io::Result<Self> {
        let root = OnceLock::new();
        if let Some(dir) = dir {
            let _ = root.set(Some(Root::open(dir.to_owned(), false)?));
        }
        Ok(Self {
            root: Arc::new(root),
        })
    }

    /// The directory served, once there is one; `None` if the default set could not be
    /// written (said once in the log: every file is then a 404).
    pub fn dir(&self) -> Option<&Path> {
        let root = self.root.get_or_init(|| {
            match write_default_set().and_then(|dir| Root::open(dir, true)) {
                Ok(root) => Some(root),
                Err(err) => {
                    tracing::error!(%err, "no static files to serve");
                    None
                }
            }
        });
        root.as_ref().map(|root| root.dir.as_path())
    }

    /// The file `path` (what follows `/static/` in a request's path, percent-encoded as sent)
    /// names, if it may be served: its segments decoded (an encoded slash separating as a
    /// slash does), none empty, `.` or `..`, hidden
    /// (starting with a dot), holding a NUL or a backslash; the file, once every symbolic
    /// link on the way is followed, inside the directory, and a regular file. `None`
    /// otherwise (the route's 404). The file's metadata comes with it, read once.
    pub fn resolve(&self, path: &str) -> Option<Resolved> {
        let mut relative = PathBuf::new();
        for segment in path.split('/') {
            // An encoded slash separates as a slash does: `%2Fetc` is no absolute path.
            for part in percent_decoded(segment)?.split('/') {
                if part.is_empty() || part.starts_with('.') || part.contains(['\0', '\\']) {
                    return None;
                }
                relative.push(part);
            }
        }
        let dir = self.dir()?;
        let file = dir.join(relative).canonicalize().ok()?;
        let metadata = fs::metadata(&file).ok()?;
        (file.starts_with(dir) && metadata.is_file()).then_some(Resolved {
            path: file,
            metadata,
        })
    }
}

/// A file [`Statics::resolve`] allows: its canonical path and its metadata.
#[derive(Debug)]
pub struct Resolved {
    /// The canonical path, no link on it.
    pub path: PathBuf,
    /// Its metadata, as `resolve` read it.
    pub metadata: fs::Metadata,
}

/// `segment` with its `%XX` escapes decoded, if they are well formed and it is UTF-8.
fn percent_decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits, no sign (`from_str_radix` would take `%+f`).
            let digit = |at: usize| char::from(*bytes.get(at)?).to_digit(16);
            out.push((digit(i + 1)? * 16 + digit(i + 2)?) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A strong entity tag for a file of `metadata`: its length and modification time, as
/// actix-files makes one (less the inode, which a copy of the directory would change).
pub fn etag(metadata: &fs::Metadata) -> Option<String> {
    let modified = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!(
        "\"{:x}-{:x}.{:x}\"",
        metadata.len(),
        modified.as_secs(),
        modified.subsec_nanos()
    ))
}

/// Whether an `If-None-Match` value names `etag` (or is `*`): the file has not changed, 304.
/// Weak tags match by their opaque part, as RFC 9110 §13.1.2 has it for this header.
pub fn none_match(if_none_match: &str, etag: &str) -> bool {
    if_none_match.trim() == "*"
        || if_none_match
            .split(',')
            .any(|tag| tag.trim().trim_start_matches("W/") == etag)
}

/// The default set: each file's path under the directory and its bytes, the same every time.
pub fn default_set() -> Vec<(&'static str, Vec<u8>)> {
    let mut random = SplitMix(0x6772_6565_742d_7374);
    let mut text = |words: usize| prose(&mut random, words);
    let mut files = vec![
        ("index.html", page("Greetings", &text(700))),
        ("about.html", page("About", &text(300))),
        ("blog/post.html", page("A post", &text(1500))),
        ("css/style.css", style(&mut SplitMix(1), 600)),
        ("css/reset.css", style(&mut SplitMix(2), 50)),
        ("css/print.css", style(&mut SplitMix(3), 20)),
        ("js/app.js", script(&mut SplitMix(4), 1200)),
        ("js/vendor.js", script(&mut SplitMix(5), 4000)),
        ("js/small.js", script(&mut SplitMix(6), 15)),
        ("data/catalog.json", catalog(&mut SplitMix(7), 400)),
        ("data/config.json", catalog(&mut SplitMix(8), 5)),
        ("img/logo.svg", svg(&mut SplitMix(9), 60)),
        ("img/icons.svg", svg(&mut SplitMix(10), 160)),
        ("img/photo.png", png(&mut SplitMix(11), 200, 160, true)),
        ("img/thumb.png", png(&mut SplitMix(12), 64, 48, false)),
        ("favicon.ico", ico(&png(&mut SplitMix(13), 16, 16, false))),
        ("robots.txt", b"User-agent: *\nDisallow: /downloads/\n".to_vec()),
        ("site.webmanifest", br##"{"name":"Greetings","short_name":"Greetings","start_url":"/static/index.html","display":"standalone","background_color":"#ffffff","icons":[{"src":"/static/img/logo.svg","sizes":"any","type":"image/svg+xml"}]}"##.to_vec()),
        ("docs/guide.txt", text(3000).into_bytes()),
    ];
    let mut large = vec![0u8; 8 << 20];
    SplitMix(14).fill(&mut large);
    files.push(("downloads/large.bin", large));
    files
}

/// Writes [`default_set`] into a new directory under the temp dir, its name random and its
/// mode 0700, made here or not at all: one that someone else made first (with links in it to
/// files of ours) is refused, never written through. Its path.
fn write_default_set() -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let mut random = [0u8; 8];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut random)
        .map_err(|_| io::Error::other("no random numbers for the static dir's name"))?;
    let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("greet-static-{}-{name}", std::process::id()));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("making the static dir {}: {err}", dir.display()),
            )
        })?;
    let written = (|| -> io::Result<()> {
        for (path, bytes) in default_set() {
            let path = dir.join(path);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(path, bytes)?;
        }
        Ok(())
    })();
    match written {
        Ok(()) => Ok(dir),
        Err(err) => {
            let _ = fs::remove_dir_all(&dir);
            Err(io::Error::new(
                err.kind(),
                format!(
                    "writing the default static files to {}: {err}",
                    dir.display()
                ),
            ))
        }
    }
}

/// A small, fast, seeded generator (SplitMix64): the same files on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn fill(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let word = self.next().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

const WORDS: [&str; 32] = [
    "hello", "greeting", "server", "request", "answer", "world", "friend", "morning", "evening",
    "visit", "welcome", "letter", "message", "reply", "kind", "warm", "open", "door", "table",
    "light", "river", "city", "garden", "window", "street", "music", "story", "travel", "home",
    "small", "bright", "quiet",
];

/// `words` words of prose in sentences, as compressible as a page's text.
fn prose(random: &mut SplitMix, words: usize) -> String {
    let mut out = String::new();
    for i in 0..words {
        let word = WORDS[random.below(WORDS.len())];
        if i % 12 == 0 {
            let mut c = word.chars();
            out.extend(c.next().map(|c| c.to_ascii_uppercase()));
            out.push_str(c.as_str());
        } else {
            out.push_str(word);
        }
        out.push_str(if i % 12 == 11 { ".\n" } else { " " });
    }
    out
}

fn page(title: &str, text: &str) -> Vec<u8> {
    let paragraphs: String = text
        .lines()
        .map(|line| format!("    <p>{line}</p>\n"))
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>{title}</title>\n  <link rel=\"stylesheet\" href=\"css/style.css\">\n  <script src=\"js/app.js\" defer></script>\n</head>\n<body>\n  <header><img src=\"img/logo.svg\" alt=\"\"><h1>{title}</h1></header>\n  <main>\n{paragraphs}  </main>\n</body>\n</html>\n"
    )
    .into_bytes()
}

fn style(random: &mut SplitMix, rules: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..rules {
        let name = WORDS[random.below(WORDS.len())];
        out.push_str(&format!(
            ".{name}-{i} {{\n  margin: {}px {}px;\n  color: #{:06x};\n  font-size: {}rem;\n}}\n",
            random.below(32),
            random.below(32),
            random.next() & 0xff_ffff,
            1 + random.below(3)
        ));
    }
    out.into_bytes()
}

fn script(random: &mut SplitMix, functions: usize) -> Vec<u8> {
    let mut out = String::from("\"use strict\";\n");
    for i in 0..functions {
        let (a, b) = (WORDS[random.below(32)], WORDS[random.below(32)]);
        out.push_str(&format!(
            "function {a}{i}({b}) {{ return {b} * {} + \"{a}\".length; }}\n",
            random.below(1000)
        ));
    }
    out.into_bytes()
}

fn catalog(random: &mut SplitMix, items: usize) -> Vec<u8> {
    let items: Vec<String> = (0..items)
        .map(|id| {
            format!(
                "{{\"id\":{id},\"name\":\"{} {}\",\"price\":{}.{:02},\"tags\":[\"{}\",\"{}\"]}}",
                WORDS[random.below(32)],
                WORDS[random.below(32)],
                random.below(500),
                random.below(100),
                WORDS[random.below(32)],
                WORDS[random.below(32)]
            )
        })
        .collect();
    format!("[{}]\n", items.join(",")).into_bytes()
}

fn svg(random: &mut SplitMix, shapes: usize) -> Vec<u8> {
    let mut out =
        String::from("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 256 256\">\n");
    for _ in 0..shapes {
        out.push_str(&format!(
            "  <circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#{:06x}\"/>\n",
            random.below(256),
            random.below(256),
            1 + random.below(40),
            random.next() & 0xff_ffff
        ));
    }
    out.push_str("</svg>\n");
    out.into_bytes()
}

/// A valid RGB PNG of `width` × `height`: noise (as a photo compresses: hardly) or a
/// gradient, its pixels stored in uncompressed deflate blocks.
fn png(random: &mut SplitMix, width: u32, height: u32, noise: bool) -> Vec<u8> {
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        let mut row = vec![0u8; width as usize * 3];
        if noise {
            random.fill(&mut row);
        } else {
            for (x, px) in row.chunks_mut(3).enumerate() {
                px.copy_from_slice(&[(x * 4) as u8, (y * 5) as u8, 128]);
            }
        }
        raw.extend(row);
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks = raw.chunks(65_535);
    let last = blocks.len() - 1;
    for (i, block) in raw.chunks(65_535).enumerate() {
        let len = block.len() as u16;
        zlib.push(u8::from(i == last));
        zlib.extend(len.to_le_bytes());
        zlib.extend((!len).to_le_bytes());
        zlib.extend(block);
    }
    zlib.extend(adler32(&raw).to_be_bytes());
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter choice, no interlace
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [(b"IHDR", header), (b"IDAT", zlib), (b"IEND", Vec::new())] {
        out.extend((data.len() as u32).to_be_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(&data);
        out.extend(kind);
        out.extend(data);
        out.extend(crc.finalize().to_be_bytes());
    }
    out
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in bytes {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

/// An icon file holding one 16 × 16 PNG.
fn ico(png: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 1, 0, 1, 0]; // reserved, type icon, one image
    out.extend([16, 16, 0, 0, 1, 0, 32, 0]); // size, no palette, planes, bits per pixel
    out.extend((png.len() as u32).to_le_bytes());
    out.extend(22u32.to_le_bytes()); // where the image starts
    out.extend(png);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_is_twenty_files_and_the_same_each_time() {
        let set = default_set();
        assert_eq!(set.len(), 20);
        assert_eq!(set, default_set());
        let sizes: Vec<_> = set
            .iter()
            .map(|(p, b)| format!("{p} {}", b.len()))
            .collect();
        eprintln!("{}", sizes.join("\n"));
        let size = |name: &str| set.iter().find(|(p, _)| *p == name).unwrap().1.len();
        assert_eq!(size("downloads/large.bin"), 8 << 20);
        assert!(size("js/small.js") < usize::from(greet_core::compress::MIN_BYTES));
        assert!(size("js/vendor.js") > 100_000);
        let png = &set.iter().find(|(p, _)| *p == "img/photo.png").unwrap().1;
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.ends_with(&[0xae, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn resolve_keeps_to_the_directory() {
        let statics = Statics::open(None).expect("default set");
        let dir = statics.dir().expect("written").to_owned();
        assert_eq!(
            statics.resolve("index.html").map(|f| f.path),
            Some(dir.join("index.html"))
        );
        assert_eq!(
            statics.resolve("css/style.css").map(|f| f.path),
            Some(dir.join("css/style.css"))
        );
        assert_eq!(
            statics.resolve("css%2Fstyle.css").map(|f| f.path),
            Some(dir.join("css/style.css"))
        );
        std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
        std::os::unix::fs::symlink("index.html", dir.join("home.html")).unwrap();
        for bad in [
            "../etc/passwd",
            "..%2fetc%2fpasswd",
            "%2e%2e/secret",
            "css/../../x",
            "css/%2e%2e/%2e%2e/x",
            "/etc/passwd",
            "%2fetc%2fpasswd",
            "..\\x",
            "css",
            "css/",
            "",
            ".hidden",
            "index.html%00.png",
            "%ff",
            "%zz",
            "%+f",
            "%2",
            "passwd",
            "no-such-file",
        ] {
            assert!(statics.resolve(bad).is_none(), "{bad}");
        }
        assert_eq!(
            statics.resolve("home.html").map(|f| f.path),
            Some(dir.join("index.html")),
            "a link inside"
        );
        drop(statics);
        assert!(!dir.exists(), "the default set goes with the server");
    }

    #[test]
    fn etags_match_as_if_none_match_reads_them() {
        assert!(none_match("\"a\"", "\"a\""));
        assert!(none_match("\"b\", W/\"a\"", "\"a\""));
        assert!(none_match(" * ", "\"a\""));
        assert!(!none_match("\"b\"", "\"a\""));
        assert!(!none_match("", "\"a\""));
        let file = std::env::temp_dir().join(format!("greet-etag-{}", std::process::id()));
        fs::write(&file, b"abc").unwrap();
        let tag = etag(&fs::metadata(&file).unwrap()).unwrap();
        assert!(tag.starts_with("\"3-") && tag.ends_with('"'), "{tag}");
        fs::remove_file(file).unwrap();
    }
}
