//! The [`Shape`] of a class from the file's class descriptions: an object streamed member
//! after member (ROOT's `TStreamerInfo::ReadBuffer` for an object written whole).
//!
//! What each kind of member takes (`TStreamerElement::fType`):
//!
//! ```text
//! base TObject (kBase/kTObject)  u16 version, u32 fUniqueID, u32 fBits (+ u16 if referenced)
//! other base class               byte count + version, then its members (the record's own)
//! 1-18 basic                     the number (9 Double32_t, 19 Float16_t: packed by the title's range)
//! 21-39 fixed array of basic     fArrayLength numbers
//! 61/62 object member            byte count + version, then its members
//! 65 TString                     length byte (255: u32 length follows), bytes
//! 67 TNamed                      byte count + version, TObject, fName, fTitle
//! 300/365/500 STL, std::string   byte count + version, then the container
//! ```
//!
//! Pointers, maps and sets, and classes described in several versions when nested, are refused
//! with the member that stopped it: never a guess at their bytes.

use crate::layout::{Real, Shape};
use crate::streamer_info::{StreamerElement, StreamerInfos};
use crate::types::LeafType;

/// Nested classes deeper than this are refused (a description that refers to itself).
const MAX_DEPTH: usize = 16;

/// The members of `class` (version `version`, or its only version) as a record.
pub(crate) fn record(
    infos: &StreamerInfos,
    class: &str,
    version: Option<i32>,
    depth: usize,
) -> Result<Shape, String> {
    if depth > MAX_DEPTH {
        return Err(format!("classes nested deeper than {MAX_DEPTH} at {class}"));
    }
    let info = infos
        .class(class, version.unwrap_or(i32::MIN))
        .ok_or_else(|| format!("no single description of class {class:?}"))?;
    let mut members = Vec::new();
    for element in &info.elements {
        members.extend(member(infos, element, depth).map_err(|e| format!("class {class:?}: {e}"))?);
    }
    if members.is_empty() {
        return Err(format!("class {class:?} has no members"));
    }
    Ok(Shape::Record {
        class: class.to_string(),
        members,
    })
}

/// The shape of C++ type `name` inside a container: numbers, strings, vectors, and objects of
/// described classes (each with its header).
pub(crate) fn cpp(infos: &StreamerInfos, name: &str, depth: usize) -> Result<Shape, String> {
    let failure = std::cell::RefCell::new(None);
    let class = |class: &str| match record(infos, class, None, depth + 1) {
        Ok(shape) => Some(Shape::headed(shape)),
        Err(e) => {
            failure.replace(Some(e));
            None
        }
    };
    Shape::of_cpp_with(name, &class)
        .ok_or_else(|| failure.take().unwrap_or_else(|| format!("type {name}")))
}

/// What one element of a class description streams: usually one named member; the `TObject`
/// base, two (`@fUniqueID`, `@fBits`).
pub(crate) fn member(
    infos: &StreamerInfos,
    element: &StreamerElement,
    depth: usize,
) -> Result<Vec<(String, Shape)>, String> {
    let named = |shape: Shape| Ok(vec![(element.name.clone(), shape)]);
    let refuse = || {
        Err(format!(
            "member {} of type {} (fType {})",
            element.name, element.type_name, element.type_code
        ))
    };
    if element.kind == "TStreamerBase" || element.type_code == 66 {
        if element.name == "TObject" || element.type_name == "TObject" {
            return Ok(vec![
                ("@fUniqueID".to_string(), Shape::ObjectId),
                ("@fBits".to_string(), Shape::ObjectBits),
            ]);
        }
        if element.kind == "TStreamerBase" {
            // A base class's members are this record's own, after the base's header.
            let Shape::Record { members, .. } = record(infos, &element.name, None, depth + 1)?
            else {
                return refuse();
            };
            return Ok(vec![(format!("@{}", element.name), Shape::Base(members))]);
        }
        return refuse();
    }
    match element.type_code {
        9 | 19 => named(Shape::Real(Real::from_title(
            &element.title,
            element.type_code == 9,
        ))),
        15 => named(Shape::Num(LeafType::U32)),
        1..=18 => match LeafType::from_streamer_type(element.type_code) {
            Some(t) => named(Shape::Num(t)),
            None => refuse(),
        },
        21..=39 => {
            let n = usize::try_from(element.array_length).unwrap_or(0);
            let item = match element.type_code - 20 {
                c @ (9 | 19) => Shape::Real(Real::from_title(&element.title, c == 9)),
                c => match LeafType::from_streamer_type(c) {
                    Some(t) => Shape::Num(t),
                    None => return refuse(),
                },
            };
            if n == 0 {
                return refuse();
            }
            named(Shape::Array(n, Box::new(item)))
        }
        65 => named(Shape::Text),
        61 | 62 => named(Shape::headed(record(
            infos,
            &element.type_name,
            None,
            depth + 1,
        )?)),
        67 => named(Shape::headed(Shape::Record {
            class: "TNamed".to_string(),
            members: vec![
                ("@fUniqueID".to_string(), Shape::ObjectId),
                ("@fBits".to_string(), Shape::ObjectBits),
                ("fName".to_string(), Shape::Text),
                ("fTitle".to_string(), Shape::Text),
            ],
        })),
        // 500 (kStreamer): an STL container whose class has a custom streamer; the container
        // itself is streamed as usual.
        300 | 365 | 500 if element.kind.starts_with("TStreamerSTL") => {
            let shape = cpp(infos, &element.type_name, depth).map_err(|e| {
                format!("member {} of type {}: {e}", element.name, element.type_name)
            })?;
            named(Shape::headed(shape))
        }
        _ => refuse(),
    }
}
