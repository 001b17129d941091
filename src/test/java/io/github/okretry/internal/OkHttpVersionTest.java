package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Tag("unit")
class OkHttpVersionTest {

  @ParameterizedTest(name = "\"{0}\" older than 5.4.0: {1}")
  @CsvSource({
    "5.4.0, false",
    "5.4.1, false",
    "5.5.1, false",
    "5.10.0, false",
    "6.0.0, false",
    "5.4.0-SNAPSHOT, false",
    "5.4, false",
    "5.4.0.1, false",
    "5.3.9.9, true",
    "5.004.0, false",
    "5.3.2, true",
    "5.3.99, true",
    "5.0.0-alpha.17, true",
    "5, true",
    "4.12.0, true",
    "3.14.9, true",
    "'', false",
    "dev, false",
    "v5.5.1, false",
  })
  void comparesTheLeadingNumbers(String version, boolean older) {
    assertThat(OkHttpVersion.isOlderThanMinimum(version)).isEqualTo(older);
  }

  @Test
  void theOkHttpOfTheseTestsPasses() {
    assertThatCode(OkHttpVersion::check).doesNotThrowAnyException();
  }

  @Test
  void messageNamesTheVersionFoundAndTheVersionNeeded() {
    assertThatThrownBy(() -> OkHttpVersion.check("5.3.2"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "okretry needs OkHttp 5.4.0 or newer, but found OkHttp 5.3.2 on the classpath.")
        .hasMessageContaining("exclude it");
  }

  @Test
  void noOkHttpClassMeansOkHttp3() {
    assertThatThrownBy(() -> OkHttpVersion.check(null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("found OkHttp 3.x or older");
  }

  @Test
  void minimumIsThePomsMinimum() {
    // pom.xml's okhttp.minimum.version is what CI tests against and README states.
    String pom = System.getProperty("okretry.okhttpMinimumVersion", OkHttpVersion.MINIMUM);
    assertThat(OkHttpVersion.MINIMUM).isEqualTo(pom);
  }
}
