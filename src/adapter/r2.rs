//! The artifact store on Workers R2: puts with HTTP and custom metadata, ranged reads, heads and
//! multipart uploads.

use crate::ports::{ArtifactChunk, ArtifactMeta, ArtifactStore, PartUpload, StoreError, Stored};
use futures::future::{select, Either};
use std::collections::HashMap;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{js_sys, web_sys, Data};
use worker::{Bucket, HttpMetadata, MultipartUpload, Object, Range, UploadedPart};

/// Largest offset or length R2 accepts: JavaScript's `Number.MAX_SAFE_INTEGER`. `worker`
/// asserts on larger values, so they are clamped before they reach it.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// An [`ArtifactStore`] over the `ARTIFACTS` bucket; without the binding every call fails.
pub(crate) struct R2Artifacts {
    bucket: Result<Bucket, StoreError>,
}

impl R2Artifacts {
    /// A store over `bucket` (or the reason it is missing).
    pub(super) fn new(bucket: Result<Bucket, StoreError>) -> R2Artifacts {
        R2Artifacts { bucket }
    }

    fn bucket(&self) -> Result<&Bucket, StoreError> {
        self.bucket.as_ref().map_err(StoreError::clone)
    }

    async fn head_meta(&self, key: &str) -> Result<Option<ArtifactMeta>, StoreError> {
        let object = self.bucket()?.head(key).await.map_err(r2_error)?;
        object.as_ref().map(meta).transpose()
    }
}

fn r2_error(error: worker::Error) -> StoreError {
    StoreError(format!("R2: {error}"))
}

fn js_error(error: worker::wasm_bindgen::JsValue) -> StoreError {
    StoreError(format!("R2 stream: {error:?}"))
}

/// The port's metadata for `object`; custom entries sorted by name, as R2 keeps no order.
fn meta(object: &Object) -> Result<ArtifactMeta, StoreError> {
    let mut custom: Vec<(String, String)> = object
        .custom_metadata()
        .map_err(r2_error)?
        .into_iter()
        .collect();
    // Names come from a map, so no two entries tie: the unstable sort's order is the same.
    custom.sort_unstable();
    Ok(ArtifactMeta {
        size: object.size(),
        content_type: object.http_metadata().content_type.unwrap_or_default(),
        custom,
    })
}

impl ArtifactStore for R2Artifacts {
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>, meta: ArtifactMeta) -> Stored<'a, ()> {
        Box::pin(async move {
            let http = HttpMetadata {
                content_type: Some(meta.content_type),
                ..HttpMetadata::default()
            };
            let custom: HashMap<String, String> = meta.custom.into_iter().collect();
            self.bucket()?
                .put(key, bytes)
                .http_metadata(http)
                .custom_metadata(custom)
                .execute()
                .await
                .map_err(r2_error)?;
            Ok(())
        })
    }

    fn put_pieces<'a>(
        &'a self,
        key: &'a str,
        len: u64,
        fill: &'a mut dyn FnMut(&mut String) -> bool,
        meta: ArtifactMeta,
    ) -> Stored<'a, ()> {
        Box::pin(async move {
            let bucket = self.bucket()?;
            // A stream of known length, which R2 takes as one object; each piece is copied to
            // JavaScript and written as the stream is read, so only one is held at a time.
            let length = u32::try_from(len).map_err(|_| StoreError("artifact too large".into()))?;
            let stream = worker::worker_sys::FixedLengthStream::new(length).map_err(js_error)?;
            let transform: &web_sys::TransformStream = stream.as_ref();
            let writer = transform.writable().get_writer().map_err(js_error)?;
            let http = HttpMetadata {
                content_type: Some(meta.content_type),
                ..HttpMetadata::default()
            };
            let custom: HashMap<String, String> = meta.custom.into_iter().collect();
            let put = bucket
                .put(key, Data::ReadableStream(transform.readable()))
                .http_metadata(http)
                .custom_metadata(custom)
                .execute();
            let write = async {
                let mut piece = String::new();
                loop {
                    piece.clear();
                    let more = fill(&mut piece);
                    if !piece.is_empty() {
                        let chunk = js_sys::Uint8Array::from(piece.as_bytes());
                        JsFuture::from(writer.write_with_chunk(&chunk))
                            .await
                            .map_err(js_error)?;
                    }
                    if !more {
                        break;
                    }
                }
                JsFuture::from(writer.close()).await.map_err(js_error)?;
                Ok::<(), StoreError>(())
            };
            let put = std::pin::pin!(put);
            let write = std::pin::pin!(write);
            match select(put, write).await {
                // The put ended first: with an error, or once every byte was taken.
                Either::Left((put, _)) => put.map(|_| ()).map_err(r2_error),
                Either::Right((written, put)) => {
                    if let Err(error) = written {
                        let _ = writer.abort();
                        return Err(error);
                    }
                    put.await.map(|_| ()).map_err(r2_error)
                }
            }
        })
    }

    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> Stored<'a, Option<ArtifactChunk>> {
        Box::pin(async move {
            let empty = |meta| ArtifactChunk {
                bytes: Vec::new(),
                meta,
            };
            // R2 rejects empty ranges and ranges starting past the end, where the port promises
            // an empty chunk: answer those from the object's metadata.
            if length == 0 || offset > MAX_SAFE_INTEGER {
                return Ok(self.head_meta(key).await?.map(empty));
            }
            let range = Range::OffsetWithLength {
                offset,
                length: length.min(MAX_SAFE_INTEGER),
            };
            let object = match self.bucket()?.get(key).range(range).execute().await {
                Ok(object) => object,
                Err(error) => {
                    return match self.head_meta(key).await? {
                        Some(meta) if offset >= meta.size => Ok(Some(empty(meta))),
                        Some(_) => Err(r2_error(error)),
                        None => Ok(None),
                    };
                }
            };
            let Some(object) = object else {
                return Ok(None);
            };
            let meta = meta(&object)?;
            let bytes = match object.body() {
                Some(body) => body.bytes().await.map_err(r2_error)?,
                None => Vec::new(),
            };
            Ok(Some(ArtifactChunk { bytes, meta }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> Stored<'a, Option<ArtifactMeta>> {
        Box::pin(self.head_meta(key))
    }

    fn begin_upload(
        &self,
        key: String,
        meta: ArtifactMeta,
    ) -> Stored<'_, Box<dyn PartUpload + '_>> {
        Box::pin(async move {
            let http = HttpMetadata {
                content_type: Some(meta.content_type),
                ..HttpMetadata::default()
            };
            let custom: HashMap<String, String> = meta.custom.into_iter().collect();
            let upload = self
                .bucket()?
                .create_multipart_upload(key)
                .http_metadata(http)
                .custom_metadata(custom)
                .execute()
                .await
                .map_err(r2_error)?;
            let upload: Box<dyn PartUpload + '_> = Box::new(R2Upload {
                upload: Some(upload),
                parts: Vec::new(),
            });
            Ok(upload)
        })
    }
}

/// An R2 multipart upload and the parts uploaded so far.
struct R2Upload {
    upload: Option<MultipartUpload>,
    parts: Vec<UploadedPart>,
}

impl PartUpload for R2Upload {
    fn put_part(&mut self, bytes: Vec<u8>) -> Stored<'_, ()> {
        Box::pin(async move {
            let number = u16::try_from(self.parts.len() + 1)
                .map_err(|_| StoreError("too many parts".into()))?;
            let upload = self
                .upload
                .as_ref()
                .ok_or_else(|| StoreError("the multipart upload is over".into()))?;
            let part = upload.upload_part(number, bytes).await.map_err(r2_error)?;
            self.parts.push(part);
            Ok(())
        })
    }

    fn complete(&mut self) -> Stored<'_, ()> {
        Box::pin(async move {
            let upload = self
                .upload
                .take()
                .ok_or_else(|| StoreError("the multipart upload is over".into()))?;
            upload
                .complete(std::mem::take(&mut self.parts))
                .await
                .map_err(r2_error)?;
            Ok(())
        })
    }

    fn abort(&mut self) -> Stored<'_, ()> {
        Box::pin(async move {
            if let Some(upload) = self.upload.take() {
                upload.abort().await.map_err(r2_error)?;
            }
            Ok(())
        })
    }
}
