//! The file's class descriptions (`TStreamerInfo`, the TList at the header's `fSeekInfo`): what
//! each member of a class is, as the members of a split object need to be read.
//!
//! Only what branch layouts use is kept: per class and version, its elements in order (name,
//! type code, type name, and for STL members the container kind and element type code).
//! Layout (ROOT core/meta TStreamerInfo::Streamer, TStreamerElement::Streamer; uproot
//! streamers.py):
//!
//! ```text
//! TList       bcv; TObject; TString fName; i32 n; n x (object pointer; u8 option length; option)
//! TStreamerInfo v9
//!             bcv; TNamed (class name, title); u32 fCheckSum; i32 fClassVersion;
//!             object pointer -> TObjArray of elements
//! TStreamerElement (in every element class, after the class's own bcv)
//!             bcv; TNamed (member name, title); i32 fType; i32 fSize; i32 fArrayLength;
//!             i32 fArrayDim; fMaxIndex (v1: i32 n + n x i32; later 5 x i32); TString fTypeName;
//!             v3 only: f64 fXmin, fXmax, fFactor
//! TStreamerSTL  ... element ...; i32 fSTLtype; i32 fCtype
//! ```
//!
//! Every element class carries a byte count, so classes this module does not know are skipped
//! whole. Malformed input is an error, never a panic.

use std::collections::HashMap;

use crate::cursor::Cursor;
use crate::error::Result;
use crate::streamer::{Pointer, Streamer};

/// One member of a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamerElement {
    /// The element's streamer class (`TStreamerBasicType`, `TStreamerSTL`, ...).
    pub kind: String,
    /// Member name.
    pub name: String,
    /// Member title (comment; holds `[min,max,bits]` ranges of Double32_t and Float16_t).
    pub title: String,
    /// Type code (`TStreamerElement::fType`: 1-19 basic, +20 fixed array, 300 STL, ...).
    pub type_code: i32,
    /// Type name as written (`float`, `vector<float>`, `string`).
    pub type_name: String,
    /// Elements of a fixed-size array member (`fArrayLength`, 0 when not an array).
    pub array_length: i32,
    /// For STL members: the container kind (`fSTLtype`: 1 vector, ...) and the element type
    /// code (`fCtype`).
    pub stl: Option<(i32, i32)>,
}

/// One version of one class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassInfo {
    /// Class name.
    pub name: String,
    /// Class version.
    pub version: i32,
    /// Its members in streaming order (`TBranchElement::fID` indexes them).
    pub elements: Vec<StreamerElement>,
}

/// Every class description of a file, by class name (all versions).
#[derive(Debug, Clone, Default)]
pub struct StreamerInfos {
    classes: HashMap<String, Vec<ClassInfo>>,
}

impl StreamerInfos {
    /// Parses the uncompressed payload of the `fSeekInfo` key (`keylen`: its header size, the
    /// origin of in-payload offsets).
    ///
    /// # Errors
    /// Truncated or malformed records.
    pub fn parse(payload: &[u8], keylen: u16) -> Result<Self> {
        let mut s = Streamer::new(Cursor::new(
            payload,
            u64::from(keylen),
            "TStreamerInfo list",
        ));
        s.enter()?;
        let bcv = s.bcv()?;
        s.tobject()?;
        let _name = s.cur.string()?;
        let n = s.cur.i32()?;
        let n = usize::try_from(n).map_err(|_| s.cur.corrupt(format!("negative count {n}")))?;
        if n > s.cur.remaining() {
            return Err(s.cur.truncated(n));
        }
        let mut infos = Self::default();
        for _ in 0..n {
            if let Pointer::Object { class, end } = s.pointer()? {
                if class == "TStreamerInfo" {
                    let info = read_info(&mut s)?;
                    infos
                        .classes
                        .entry(info.name.clone())
                        .or_default()
                        .push(info);
                }
                if let Some(end) = end {
                    s.cur.seek_abs(end)?;
                } else if class != "TStreamerInfo" {
                    return Err(s.cur.corrupt(format!("cannot skip {class} in the list")));
                }
            }
            // The entry's option string.
            let len = usize::from(s.cur.u8()?);
            s.cur.skip(len)?;
        }
        s.finish(bcv)?;
        s.leave();
        Ok(infos)
    }

    /// The description of `class` at `version`, or its only one when the version is not
    /// found (files often hold one version per class).
    #[must_use]
    pub fn class(&self, class: &str, version: i32) -> Option<&ClassInfo> {
        // Type names inside other names are spelled with or without spaces (`A<B<C> >`).
        let versions = self.classes.get(class).or_else(|| {
            let bare: String = class.chars().filter(|c| !c.is_whitespace()).collect();
            self.classes
                .iter()
                .find(|(name, _)| name.chars().filter(|c| !c.is_whitespace()).eq(bare.chars()))
                .map(|(_, v)| v)
        })?;
        versions
            .iter()
            .find(|c| c.version == version)
            .or_else(|| (versions.len() == 1).then(|| &versions[0]))
    }

    /// Number of classes described.
    #[must_use]
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Whether no class is described.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

fn read_info(s: &mut Streamer<'_>) -> Result<ClassInfo> {
    s.enter()?;
    let bcv = s.bcv()?;
    let (name, _title) = s.tnamed()?;
    let _checksum = s.cur.u32()?;
    let version = s.cur.i32()?;
    let mut elements = Vec::new();
    if let Pointer::Object { class, end } = s.pointer()? {
        if class == "TObjArray" {
            let (abcv, n) = s.tobjarray_header()?;
            for _ in 0..n {
                if let Pointer::Object { class, end } = s.pointer()? {
                    let element = read_element(s, &class)?;
                    if let Some(end) = end {
                        s.cur.seek_abs(end)?;
                    }
                    elements.push(element);
                }
            }
            s.finish(abcv)?;
        } else if let Some(end) = end {
            s.cur.seek_abs(end)?;
        }
    }
    s.finish(bcv)?;
    s.leave();
    Ok(ClassInfo {
        name,
        version,
        elements,
    })
}

/// One element: its class's own header, the common TStreamerElement part, and the STL fields.
fn read_element(s: &mut Streamer<'_>, kind: &str) -> Result<StreamerElement> {
    s.enter()?;
    let outer = s.bcv()?;
    // TStreamerSTLstring streams a TStreamerSTL, which streams the element.
    let stl_outer = if kind == "TStreamerSTLstring" {
        Some(s.bcv()?)
    } else {
        None
    };
    let inner = s.bcv()?;
    let (name, title) = s.tnamed()?;
    let mut type_code = s.cur.i32()?;
    let _size = s.cur.i32()?;
    let array_length = s.cur.i32()?;
    let _array_dim = s.cur.i32()?;
    if inner.version == 1 {
        let n = s.cur.i32()?;
        s.cur.counted(i64::from(n), 4, Cursor::i32)?;
    } else {
        s.cur.skip(5 * 4)?;
    }
    let type_name = s.cur.string()?;
    if type_code == 11 && (type_name == "Bool_t" || type_name == "bool") {
        type_code = 18;
    }
    s.finish(inner)?;
    let mut stl = None;
    if kind == "TStreamerSTL" || kind == "TStreamerSTLstring" {
        let stl_type = s.cur.i32()?;
        let ctype = s.cur.i32()?;
        stl = Some((stl_type, ctype));
    }
    if let Some(bcv) = stl_outer {
        s.finish(bcv)?;
    }
    s.finish(outer)?;
    s.leave();
    Ok(StreamerElement {
        kind: kind.to_string(),
        name,
        title,
        type_code,
        type_name,
        array_length,
        stl,
    })
}
