/* xml.c - safe XML reading and schema validation; see xml.h. */
#include "xml.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlschemas.h>

#include "sha256.h"
#include "xalloc.h"

static xmlExternalEntityLoader default_loader;

/* Serve the embedded schemas (include targets) and nothing else: no file,
 * no network, whatever a document asks for. */
static xmlParserInputPtr embedded_loader(const char *url, const char *id,
					 xmlParserCtxtPtr ctxt)
{
	(void)id;
	if (url) {
		const char *base = strrchr(url, '/');
		base = base ? base + 1 : url;
		size_t len;
		const char *text = capsim_embedded_file(base, &len);
		if (text) {
			xmlParserInputBufferPtr buf = xmlParserInputBufferCreateMem(
				text, (int)len, XML_CHAR_ENCODING_NONE);
			if (!buf)
				return NULL;
			xmlParserInputPtr in =
				xmlNewIOInputStream(ctxt, buf, XML_CHAR_ENCODING_NONE);
			if (!in)
				xmlFreeParserInputBuffer(buf);
			return in;
		}
	}
	return NULL;
}

void capsim_xml_init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	xmlInitParser();
	default_loader = xmlGetExternalEntityLoader();
	xmlSetExternalEntityLoader(embedded_loader);
}

typedef struct {
	capsim_diags *d;
	const char *file;
	int count;
} err_sink;

/* messages of one file listed; the rest are counted (sink_close) */
#define SINK_SHOWN 50

static void chomp_add(err_sink *s, long line, const char *msg)
{
	if (s->count >= SINK_SHOWN) {
		s->count++;
		return;
	}
	char buf[512];
	capsim_strlcpy(buf, msg ? msg : "unknown XML error", sizeof buf);
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	s->count++;
	capsim_diags_add(s->d, s->file, line, "%s", buf);
}

/* the count of the messages not listed, if any */
static void sink_close(const err_sink *s)
{
	if (s->count > SINK_SHOWN)
		capsim_diags_add(s->d, s->file, 0, "%d more XML errors (the first %d are listed)",
				 s->count - SINK_SHOWN, SINK_SHOWN);
}

static void structured_error(void *ctx, xmlErrorPtr err)
{
	err_sink *s = ctx;
	if (err->level == XML_ERR_WARNING)
		return;
	chomp_add(s, err->line, err->message);
}

static int has_doctype(const char *buf, size_t len)
{
	static const char pat[] = "<!DOCTYPE";
	size_t m = sizeof pat - 1;
	for (size_t i = 0; i + m <= len; i++)
		if (buf[i] == '<' && memcmp(buf + i, pat, m) == 0)
			return 1;
	return 0;
}

/* capsim reads UTF-8 only: a byte-order mark of UTF-16 or UTF-32, EBCDIC's
 * "<?xm", or a declaration naming another encoding is refused before
 * parsing (another encoding could hide a DOCTYPE from the scan above, as
 * UTF-7's "+ADw-!DOCTYPE" does). Returns 0, or -1 after the message. */
static int utf8_only(const unsigned char *b, size_t len, const char *name, capsim_diags *d)
{
	const char *what = NULL;
	if (len >= 4 && ((b[0] == 0 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff) ||
			 (b[0] == 0xff && b[1] == 0xfe && b[2] == 0 && b[3] == 0)))
		what = "UTF-32";
	else if (len >= 2 && ((b[0] == 0xfe && b[1] == 0xff) || (b[0] == 0xff && b[1] == 0xfe)))
		what = "UTF-16";
	else if (len >= 4 && ((b[0] == 0 && b[1] == '<') || (b[0] == '<' && b[1] == 0)))
		what = "UTF-16 (no byte-order mark)";
	else if (len >= 4 && b[0] == 0x4c && b[1] == 0x6f && b[2] == 0xa7 && b[3] == 0x94)
		what = "EBCDIC";
	if (what) {
		capsim_diags_add(d, name, 1, "file is %s; capsim reads UTF-8 only", what);
		return -1;
	}
	size_t off = len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
	if (len - off < 5 || memcmp(b + off, "<?xml", 5) != 0)
		return 0;
	const unsigned char *end = memchr(b + off, '>', len - off);
	size_t dl = end ? (size_t)(end - (b + off)) : len - off;
	char decl[256];
	if (dl >= sizeof decl)
		dl = sizeof decl - 1;
	memcpy(decl, b + off, dl);
	decl[dl] = '\0';
	const char *e = strstr(decl, "encoding");
	if (!e)
		return 0;
	e += 8;
	while (*e == ' ' || *e == '\t' || *e == '\r' || *e == '\n' || *e == '=')
		e++;
	char q = *e;
	if (q != '"' && q != '\'')
		return 0; /* malformed: the parser says so */
	const char *v = e + 1, *ve = strchr(v, q);
	size_t vl = ve ? (size_t)(ve - v) : strlen(v);
	if (!(vl == 5 && strncasecmp(v, "UTF-8", 5) == 0) &&
	    !(vl == 4 && strncasecmp(v, "UTF8", 4) == 0)) {
		capsim_diags_add(d, name, 1, "encoding \"%.*s\": capsim reads UTF-8 only "
				 "(declare encoding=\"UTF-8\" or none)", (int)(vl > 40 ? 40 : vl), v);
		return -1;
	}
	return 0;
}

/* the first occurrence of the n bytes of pat in [p, end), or end; *line
 * counts the newlines passed */
static const char *skip_past(const char *p, const char *end, const char *pat, size_t n,
			     long *line)
{
	for (; p < end; p++) {
		if (*p == '\n')
			(*line)++;
		else if (*p == pat[0] && (size_t)(end - p) >= n && memcmp(p, pat, n) == 0)
			return p + n;
	}
	return end;
}

/* One pass over the bytes: at most CAPSIM_XML_MAX_ELEMENTS start tags and
 * CAPSIM_XML_MAX_ATTRS attributes (an '=' outside quotes) in each. Comments,
 * CDATA, processing instructions and end tags are skipped; what is malformed
 * is left to the parser. Returns 0, or -1 after the message. */
static int within_limits(const char *buf, size_t len, const char *name, capsim_diags *d)
{
	const char *p = buf, *end = buf + len;
	long line = 1, elements = 0;
	while (p < end) {
		if (*p == '\n')
			line++;
		if (*p != '<') {
			p++;
			continue;
		}
		size_t left = (size_t)(end - p);
		if (left >= 4 && memcmp(p, "<!--", 4) == 0) {
			p = skip_past(p + 4, end, "-->", 3, &line);
		} else if (left >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
			p = skip_past(p + 9, end, "]]>", 3, &line);
		} else if (left >= 2 && p[1] == '?') {
			p = skip_past(p + 2, end, "?>", 2, &line);
		} else if (left >= 2 && (p[1] == '!' || p[1] == '/')) {
			p = skip_past(p + 2, end, ">", 1, &line);
		} else {
			long at = line, attrs = 0;
			if (++elements > CAPSIM_XML_MAX_ELEMENTS) {
				capsim_diags_add(d, name, at, "file: expected at most %d elements (the "
						 "limit on an input file), found a %ldth here",
						 CAPSIM_XML_MAX_ELEMENTS, elements);
				return -1;
			}
			for (p++; p < end && *p != '>'; p++) {
				if (*p == '\n') {
					line++;
				} else if (*p == '"' || *p == '\'') {
					const char *q = p;
					p = skip_past(p + 1, end, q, 1, &line) - 1;
				} else if (*p == '=' && ++attrs > CAPSIM_XML_MAX_ATTRS) {
					capsim_diags_add(d, name, at, "element: expected at most %d "
							 "attributes (the limit on an element), found more",
							 CAPSIM_XML_MAX_ATTRS);
					return -1;
				}
			}
		}
	}
	return 0;
}

xmlDoc *capsim_xml_read_memory(const char *buf, size_t len, const char *name,
			       capsim_diags *d)
{
	capsim_xml_init();
	if (len > CAPSIM_XML_MAX_BYTES) {
		capsim_diags_add(d, name, 0,
				 "file is %zu bytes; input files are capped at %u bytes",
				 len, CAPSIM_XML_MAX_BYTES);
		return NULL;
	}
	if (utf8_only((const unsigned char *)buf, len, name, d) < 0)
		return NULL;
	if (has_doctype(buf, len)) {
		capsim_diags_add(d, name, 0,
				 "documents with a DOCTYPE are refused (capsim files "
				 "need no DTD or entities)");
		return NULL;
	}
	if (memchr(buf, '\0', len)) {
		capsim_diags_add(d, name, 0, "file contains a NUL byte; expected XML text");
		return NULL;
	}
	if (within_limits(buf, len, name, d) < 0)
		return NULL;
	err_sink sink = { d, name, 0 };
	xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
	if (!ctxt) {
		capsim_diags_add(d, name, 0, "cannot create an XML parser");
		return NULL;
	}
	xmlSetStructuredErrorFunc(&sink, structured_error);
	xmlDoc *doc = xmlCtxtReadMemory(ctxt, buf, (int)len, name, "UTF-8",
					XML_PARSE_NONET | XML_PARSE_BIG_LINES |
						XML_PARSE_NOERROR |
						XML_PARSE_NOWARNING);
	xmlSetStructuredErrorFunc(NULL, NULL);
	sink_close(&sink);
	int wellformed = ctxt->wellFormed;
	xmlFreeParserCtxt(ctxt);
	if (!doc || !wellformed) {
		if (sink.count == 0)
			capsim_diags_add(d, name, 0, "not well-formed XML");
		if (doc)
			xmlFreeDoc(doc);
		return NULL;
	}
	if (doc->intSubset || doc->extSubset) {
		capsim_diags_add(d, name, 0, "documents with a DOCTYPE are refused");
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}

char *capsim_xml_slurp(const char *path, size_t *out_len, capsim_diags *d)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		capsim_diags_add(d, path, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 64 * 1024, len = 0;
	char *buf = capsim_xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap > CAPSIM_XML_MAX_BYTES) {
				fclose(f);
				free(buf);
				capsim_diags_add(d, path, 0,
						 "file is larger than the %u-byte cap "
						 "on input files",
						 CAPSIM_XML_MAX_BYTES);
				return NULL;
			}
			cap *= 2;
			buf = capsim_xrealloc(buf, cap);
		}
		errno = 0;
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int err = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (err) {
		free(buf);
		capsim_diags_add(d, path, 0, "cannot read: %s", strerror(err));
		return NULL;
	}
	/* the buffer grows by doubling past the cap: the cap is the length's */
	if (len > CAPSIM_XML_MAX_BYTES) {
		free(buf);
		capsim_diags_add(d, path, 0, "file is larger than the %u-byte cap on input files",
				 CAPSIM_XML_MAX_BYTES);
		return NULL;
	}
	*out_len = len;
	return buf;
}

xmlDoc *capsim_xml_read(const char *path, char *sha256, capsim_diags *d)
{
	size_t len;
	char *buf = capsim_xml_slurp(path, &len, d);
	if (!buf)
		return NULL;
	if (sha256)
		capsim_sha256_hex(buf, len, sha256);
	xmlDoc *doc = capsim_xml_read_memory(buf, len, path, d);
	free(buf);
	return doc;
}

/* compiled schemas, one per kind, kept for the life of the process;
 * compiled under schemas_lock by the first load of its kind on any thread
 * (libcapsim's handles load on several threads at once), read only after */
static pthread_mutex_t schemas_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *name;
	xmlSchemaPtr schema;
} schemas[] = {
	{ "hardware", NULL }, { "model", NULL }, { "scenario", NULL },
	{ "bibliography", NULL }, { "profile", NULL }, { "sweep", NULL },
};

static void ignore_error(void *ctx, xmlErrorPtr err)
{
	(void)ctx;
	(void)err;
}

static xmlSchemaPtr compile_schema(const char *name)
{
	for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
		if (strcmp(schemas[i].name, name) != 0)
			continue;
		if (schemas[i].schema)
			return schemas[i].schema;
		char file[64];
		snprintf(file, sizeof file, "%s.xsd", name);
		size_t len;
		const char *text = capsim_embedded_file(file, &len);
		if (!text)
			return NULL;
		xmlSchemaParserCtxtPtr pc = xmlSchemaNewMemParserCtxt(text, (int)len);
		if (!pc)
			return NULL;
		xmlSchemaSetParserStructuredErrors(pc, ignore_error, NULL);
		schemas[i].schema = xmlSchemaParse(pc);
		xmlSchemaFreeParserCtxt(pc);
		return schemas[i].schema;
	}
	return NULL;
}

/* the compiled schema of kind name, compiled on its first use; NULL where it
 * does not compile */
static xmlSchemaPtr get_schema(const char *name)
{
	pthread_mutex_lock(&schemas_lock);
	xmlSchemaPtr s = compile_schema(name);
	pthread_mutex_unlock(&schemas_lock);
	return s;
}

int capsim_xml_validate(xmlDoc *doc, const char *schema, const char *file,
			capsim_diags *d)
{
	capsim_xml_init();
	xmlSchemaPtr s = get_schema(schema);
	if (!s) {
		capsim_diags_add(d, file, 0, "internal: schema '%s' does not compile",
				 schema);
		return -1;
	}
	xmlSchemaValidCtxtPtr vc = xmlSchemaNewValidCtxt(s);
	if (!vc) {
		capsim_diags_add(d, file, 0, "cannot create a schema validator");
		return -1;
	}
	err_sink sink = { d, file, 0 };
	xmlSchemaSetValidStructuredErrors(vc, structured_error, &sink);
	int rc = xmlSchemaValidateDoc(vc, doc);
	xmlSchemaFreeValidCtxt(vc);
	sink_close(&sink);
	if (rc != 0 && sink.count == 0)
		capsim_diags_add(d, file, 0, "does not match the %s schema", schema);
	return rc == 0 ? 0 : -1;
}
