package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The docs name every logger okretry writes to, so a user can configure them (issue 36, item 3: the
 * README and docs/architecture.md named one of three). The loggers are found in the source as
 * {@code LoggerFactory.getLogger(X.class)}.
 */
@Tag("unit")
class DocsNameTheLoggersTest {

  static List<String> loggers() throws IOException {
    Pattern getLogger = Pattern.compile("LoggerFactory\\.getLogger\\((\\w+)\\.class\\)");
    List<String> names = new ArrayList<>();
    try (Stream<Path> sources = Files.walk(Path.of("src/main/java"))) {
      for (Path source : sources.filter(p -> p.toString().endsWith(".java")).toList()) {
        String text = Files.readString(source);
        String pkg = text.replaceFirst("(?s).*?package ([\\w.]+);.*", "$1");
        Matcher m = getLogger.matcher(text);
        while (m.find()) {
          String name = pkg + "." + m.group(1);
          if (!names.contains(name)) names.add(name);
        }
      }
    }
    return names;
  }

  @Test
  void theReadmeAndTheArchitectureAndTheGuideNameEveryLogger() throws IOException {
    List<String> loggers = loggers();
    assertThat(loggers).as("found in the source").hasSizeGreaterThanOrEqualTo(3);
    String readme = Files.readString(Path.of("README.md"));
    // Its sentence on logging
    String readmeLog = readme.substring(readme.indexOf("Log: ")).split("\n\n")[0];
    String architecture = Files.readString(Path.of("docs/architecture.md"));
    String guide = Files.readString(Path.of("docs/guide.md"));
    for (String logger : loggers) {
      String simple = logger.substring(logger.lastIndexOf('.') + 1);
      assertThat(readmeLog)
          .as("README's log sentence names %s", logger)
          .containsPattern("`(io\\.github\\.okretry\\.)?" + simple + "`");
      assertThat(architecture).as("architecture.md names %s", logger).contains("`" + logger + "`");
      assertThat(guide).as("guide.md names %s", logger).contains("`" + logger + "`");
    }
  }
}
