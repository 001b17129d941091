package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Comment;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The Gradle Module Metadata that {@code mvn package} writes beside the jars (pom.xml, execution
 * gradle-module-metadata): valid by the 1.1 specification as far as Gradle's parser checks it,
 * describing the files actually built (size and all four hashes), pointing Gradle at OkHttp's
 * multiplatform root, and listing what the POM lists. Gradle only reads it when the POM carries the
 * marker comment, also checked here.
 */
@Tag("integration")
class GradleModuleMetadataIT {

  static final Path JAR = Paths.get(System.getProperty("okretry.jar"));
  static final Path BASEDIR = Paths.get(System.getProperty("basedir", "."));
  static final String GRADLE_MARKER = "do_not_remove: published-with-gradle-metadata";

  @Test
  void followsTheSpecificationAndDescribesTheBuiltFiles() throws Exception {
    Map<String, Object> root = metadata();

    assertThat(root.keySet().iterator().next())
        .as("Gradle requires formatVersion first")
        .isEqualTo("formatVersion");
    assertThat(root.get("formatVersion")).isEqualTo("1.1");
    Map<String, Object> component = object(root.get("component"));
    Map<String, String> pom = pomCoordinates();
    assertThat(component.get("group")).isEqualTo(pom.get("groupId"));
    assertThat(component.get("module")).isEqualTo(pom.get("artifactId"));
    assertThat(component.get("version")).isEqualTo(pom.get("version"));

    List<Object> variants = array(root.get("variants"));
    Set<String> names = new HashSet<>();
    Set<Map<String, Object>> attributeSets = new HashSet<>();
    for (Object v : variants) {
      Map<String, Object> variant = object(v);
      String name = (String) variant.get("name");
      assertThat(names.add(name)).as("variant names are unique: %s", name).isTrue();
      Map<String, Object> attributes = object(variant.get("attributes"));
      assertThat(attributes).as("%s has attributes", name).isNotEmpty();
      attributes.forEach(
          (key, value) -> {
            if (key.equals("org.gradle.jvm.version")) {
              assertThat(value).as(key).isInstanceOf(Long.class);
            } else {
              assertThat(value).as(key).isInstanceOfAny(String.class, Boolean.class);
            }
          });
      assertThat(attributeSets.add(attributes))
          .as("%s: attributes differ from every other variant", name)
          .isTrue();

      for (Object d : array(variant.getOrDefault("dependencies", List.of()))) {
        Map<String, Object> dependency = object(d);
        assertThat(dependency.get("group")).isInstanceOf(String.class);
        assertThat(dependency.get("module")).isInstanceOf(String.class);
        assertThat((String) object(dependency.get("version")).get("requires")).isNotBlank();
      }

      List<Object> files = array(variant.get("files"));
      assertThat(files).as("%s has a file", name).hasSize(1);
      Map<String, Object> file = object(files.get(0));
      Path built = JAR.resolveSibling((String) file.get("url"));
      assertThat(built).as("url is relative to the .module").exists();
      assertThat(file.get("name")).isEqualTo(built.getFileName().toString());
      byte[] bytes = Files.readAllBytes(built);
      assertThat(file.get("size")).as("%s size", built).isEqualTo((long) bytes.length);
      assertThat(file.get("sha512")).as("%s sha512", built).isEqualTo(hash("SHA-512", bytes));
      assertThat(file.get("sha256")).as("%s sha256", built).isEqualTo(hash("SHA-256", bytes));
      assertThat(file.get("sha1")).as("%s sha1", built).isEqualTo(hash("SHA-1", bytes));
      assertThat(file.get("md5")).as("%s md5", built).isEqualTo(hash("MD5", bytes));
    }
    assertThat(names)
        .containsExactlyInAnyOrder(
            "apiElements", "runtimeElements", "javadocElements", "sourcesElements");
  }

  @Test
  void listsWhatThePomListsWithOkHttpsMultiplatformRoot() throws Exception {
    Map<String, Map<String, String>> variants = new HashMap<>();
    for (Object v : array(metadata().get("variants"))) {
      Map<String, String> dependencies = new TreeMap<>();
      for (Object d : array(object(v).getOrDefault("dependencies", List.of()))) {
        Map<String, Object> dependency = object(d);
        dependencies.put(
            dependency.get("group") + ":" + dependency.get("module"),
            (String) object(dependency.get("version")).get("requires"));
      }
      variants.put((String) object(v).get("name"), dependencies);
    }

    // Gradle resolves the multiplatform roots (okhttp, okio) to the JVM or Android jars itself.
    Map<String, String> expected = new TreeMap<>();
    pomDependencies()
        .forEach(
            (artifact, version) ->
                expected.put(
                    artifact.replace(":okhttp-jvm", ":okhttp").replace(":okio-jvm", ":okio"),
                    version));
    assertThat(variants.get("runtimeElements")).isEqualTo(expected);
    assertThat(variants.get("runtimeElements"))
        .containsKey("com.squareup.okhttp3:okhttp")
        .doesNotContainKey("com.squareup.okhttp3:okhttp-jvm");
    // On a consumer's compile classpath: the types in okretry's API and its nullness annotations.
    assertThat(variants.get("apiElements"))
        .containsOnlyKeys("com.squareup.okhttp3:okhttp", "org.jspecify:jspecify");
    assertThat(variants.get("apiElements"))
        .isEqualTo(subMap(expected, variants.get("apiElements").keySet()));
  }

  @Test
  void pomCarriesTheMarkerWhereGradleLooksForIt() throws Exception {
    // Gradle reads the .module only if a comment that is a direct child of <project> has it.
    Element project = pomDocument().getDocumentElement();
    boolean found = false;
    NodeList children = project.getChildNodes();
    for (int i = 0; i < children.getLength(); i++) {
      Node child = children.item(i);
      found |= child instanceof Comment && child.getNodeValue().contains(GRADLE_MARKER);
    }
    assertThat(found).isTrue();
  }

  private static Map<String, Object> metadata() throws Exception {
    String name = JAR.getFileName().toString().replaceFirst("\\.jar$", ".module");
    return object(
        new Json(Files.readString(JAR.resolveSibling(name), StandardCharsets.UTF_8)).parse());
  }

  private static Document pomDocument() throws Exception {
    return DocumentBuilderFactory.newInstance()
        .newDocumentBuilder()
        .parse(BASEDIR.resolve("pom.xml").toFile());
  }

  private static Map<String, String> pomCoordinates() throws Exception {
    Element project = pomDocument().getDocumentElement();
    Map<String, String> coordinates = new HashMap<>();
    for (String tag : List.of("groupId", "artifactId", "version")) {
      coordinates.put(tag, childText(project, tag));
    }
    return coordinates;
  }

  /**
   * group:artifact → version of the POM's compile and runtime dependencies, properties resolved.
   */
  private static Map<String, String> pomDependencies() throws Exception {
    Element project = pomDocument().getDocumentElement();
    Map<String, String> properties = new HashMap<>();
    Element props = child(project, "properties");
    for (Node n = props.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element) properties.put(n.getNodeName(), n.getTextContent().trim());
    }
    Map<String, String> dependencies = new TreeMap<>();
    Element list = child(project, "dependencies");
    for (Node n = list.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (!(n instanceof Element)) continue;
      Element dependency = (Element) n;
      String scope = childText(dependency, "scope");
      if (scope != null && !scope.equals("compile") && !scope.equals("runtime")) continue;
      String version = childText(dependency, "version");
      if (version.startsWith("${")) {
        version = properties.get(version.substring(2, version.length() - 1));
      }
      dependencies.put(
          childText(dependency, "groupId") + ":" + childText(dependency, "artifactId"), version);
    }
    return dependencies;
  }

  private static Element child(Element parent, String tag) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element && n.getNodeName().equals(tag)) return (Element) n;
    }
    return null;
  }

  private static String childText(Element parent, String tag) {
    Element child = child(parent, tag);
    return child == null ? null : child.getTextContent().trim();
  }

  private static Map<String, String> subMap(Map<String, String> map, Set<String> keys) {
    Map<String, String> sub = new TreeMap<>(map);
    sub.keySet().retainAll(keys);
    return sub;
  }

  private static String hash(String algorithm, byte[] bytes) throws Exception {
    StringBuilder hex = new StringBuilder();
    for (byte b : MessageDigest.getInstance(algorithm).digest(bytes)) {
      hex.append(String.format("%02x", b));
    }
    return hex.toString();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object value) {
    assertThat(value).isInstanceOf(Map.class);
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> array(Object value) {
    assertThat(value).isInstanceOf(List.class);
    return (List<Object>) value;
  }

  /** Just enough JSON (RFC 8259) for the test: objects keep their order; integers are Longs. */
  static final class Json {
    private final String text;
    private int i;

    Json(String text) {
      this.text = text;
    }

    Object parse() {
      Object value = value();
      skipSpace();
      if (i != text.length()) throw error("trailing content");
      return value;
    }

    private Object value() {
      skipSpace();
      if (i >= text.length()) throw error("unexpected end");
      char c = text.charAt(i);
      if (c == '{') return object();
      if (c == '[') return array();
      if (c == '"') return string();
      if (text.startsWith("true", i)) {
        i += 4;
        return Boolean.TRUE;
      }
      if (text.startsWith("false", i)) {
        i += 5;
        return Boolean.FALSE;
      }
      if (text.startsWith("null", i)) {
        i += 4;
        return null;
      }
      return number();
    }

    private Map<String, Object> object() {
      Map<String, Object> map = new LinkedHashMap<>();
      i++; // {
      skipSpace();
      if (peek('}')) {
        i++;
        return map;
      }
      while (true) {
        skipSpace();
        String key = string();
        skipSpace();
        expect(':');
        if (map.put(key, value()) != null) throw error("duplicate key " + key);
        skipSpace();
        if (peek(',')) {
          i++;
          continue;
        }
        expect('}');
        return map;
      }
    }

    private List<Object> array() {
      List<Object> list = new ArrayList<>();
      i++; // [
      skipSpace();
      if (peek(']')) {
        i++;
        return list;
      }
      while (true) {
        list.add(value());
        skipSpace();
        if (peek(',')) {
          i++;
          continue;
        }
        expect(']');
        return list;
      }
    }

    private String string() {
      expect('"');
      StringBuilder s = new StringBuilder();
      while (true) {
        if (i >= text.length()) throw error("unterminated string");
        char c = text.charAt(i++);
        if (c == '"') return s.toString();
        if (c < 0x20) throw error("control character in string");
        if (c != '\\') {
          s.append(c);
          continue;
        }
        char e = text.charAt(i++);
        switch (e) {
          case '"':
          case '\\':
          case '/':
            s.append(e);
            break;
          case 'b':
            s.append('\b');
            break;
          case 'f':
            s.append('\f');
            break;
          case 'n':
            s.append('\n');
            break;
          case 'r':
            s.append('\r');
            break;
          case 't':
            s.append('\t');
            break;
          case 'u':
            s.append((char) Integer.parseInt(text.substring(i, i + 4), 16));
            i += 4;
            break;
          default:
            throw error("bad escape \\" + e);
        }
      }
    }

    private Object number() {
      int start = i;
      while (i < text.length() && "+-0123456789.eE".indexOf(text.charAt(i)) >= 0) i++;
      String n = text.substring(start, i);
      if (!n.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
        throw error("not a value: " + n);
      }
      return n.matches("-?[0-9]+") ? (Object) Long.parseLong(n) : (Object) Double.parseDouble(n);
    }

    private void skipSpace() {
      while (i < text.length() && " \t\r\n".indexOf(text.charAt(i)) >= 0) i++;
    }

    private boolean peek(char c) {
      return i < text.length() && text.charAt(i) == c;
    }

    private void expect(char c) {
      if (!peek(c)) throw error("expected '" + c + "'");
      i++;
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at offset " + i);
    }
  }
}
