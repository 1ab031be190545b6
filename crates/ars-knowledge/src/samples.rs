//! Small documents made in memory, for tests and examples: a `.docx` and a one-page PDF,
//! each the smallest file its reader takes as real.

use std::io::Write;

/// A .docx with a title, a heading, a paragraph with a tab and an entity.
pub fn docx() -> Vec<u8> {
    docx_of(DOCUMENT_XML)
}

/// A .docx whose `word/document.xml` is `xml`.
pub fn docx_of(xml: &str) -> Vec<u8> {
    // Writing to memory does not fail.
    write_docx(xml).unwrap_or_default()
}

const DOCUMENT_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>报销制度</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Hotels</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">At most 600 &amp; </w:t></w:r><w:r><w:tab/><w:t>no more.</w:t></w:r></w:p>
</w:body></w:document>"#;

fn write_docx(xml: &str) -> zip::result::ZipResult<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )?;
    zip.write_all(xml.as_bytes())?;
    Ok(zip.finish()?.into_inner())
}

/// A one-page PDF saying `text` (ASCII) in Helvetica, with a correct cross-reference table.
pub fn pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}
