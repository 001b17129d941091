package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.commons.annotation.Testable;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Every test class says which of the three kinds it is, with exactly one tag on the class: {@code
 * unit} (no sockets, fake or no time), {@code integration} (real OkHttp calls to MockWebServer or a
 * loopback socket) or {@code soak} (minutes; left out of {@code mvn test}). A nested group or a
 * method may add {@code slow} (real time; left out of mutation testing), and only inside an
 * integration class; none may carry a kind of its own.
 */
@Tag("unit")
class TestKindsTest {
  static final Set<String> KINDS = Set.of("unit", "integration", "soak");

  @Test
  void everyTestClassCarriesExactlyOneKindTag() throws Exception {
    List<String> problems = new ArrayList<>();
    List<Class<?>> testClasses = new ArrayList<>();
    for (Class<?> c : topLevelClasses()) {
      if (!hasTests(c)) continue;
      testClasses.add(c);
      Set<String> kinds = tags(c);
      kinds.retainAll(KINDS);
      if (kinds.size() != 1) {
        problems.add(
            c.getName()
                + " has kind tags "
                + kinds
                + ", wants exactly one of "
                + new TreeSet<>(KINDS));
      }
      checkMembers(c, tags(c).contains("integration"), problems);
    }
    assertThat(testClasses)
        .as("test classes found")
        .hasSizeGreaterThan(30)
        .contains(TestKindsTest.class);
    assertThat(problems).isEmpty();
  }

  /** Nested groups and methods add no kind, and {@code slow} only inside an integration class. */
  static void checkMembers(Class<?> c, boolean integration, List<String> problems) {
    List<AnnotatedElement> members = new ArrayList<>();
    collect(c, members);
    for (AnnotatedElement member : members) {
      for (Tag tag : member.getAnnotationsByType(Tag.class)) {
        if (KINDS.contains(tag.value())) {
          problems.add(member + " carries its own kind tag " + tag.value());
        }
        if (tag.value().equals("slow") && !integration) {
          problems.add(member + " is slow outside an integration class");
        }
      }
    }
  }

  private static void collect(Class<?> c, List<AnnotatedElement> out) {
    for (Method m : c.getDeclaredMethods()) out.add(m);
    for (Class<?> nested : c.getDeclaredClasses()) {
      out.add(nested);
      collect(nested, out);
    }
  }

  static boolean hasTests(Class<?> c) {
    for (Method m : c.getDeclaredMethods()) {
      if (AnnotationSupport.isAnnotated(m, Testable.class)) return true;
    }
    for (Class<?> nested : c.getDeclaredClasses()) {
      if (hasTests(nested)) return true;
    }
    return false;
  }

  static Set<String> tags(Class<?> c) {
    Set<String> names = new TreeSet<>();
    for (Tag tag : AnnotationSupport.findRepeatableAnnotations(c, Tag.class)) {
      names.add(tag.value());
    }
    return names;
  }

  /** The top-level classes compiled from the test sources (the examples included). */
  static List<Class<?>> topLevelClasses()
      throws IOException, URISyntaxException, ClassNotFoundException {
    Path root =
        Paths.get(TestKindsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> classes = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = root.relativize(file).toString();
        if (!name.endsWith(".class") || name.contains("$") || name.endsWith("module-info.class")) {
          continue;
        }
        String className =
            name.substring(0, name.length() - ".class".length())
                .replace(file.getFileSystem().getSeparator(), ".");
        classes.add(Class.forName(className, false, TestKindsTest.class.getClassLoader()));
      }
    }
    return classes;
  }
}
