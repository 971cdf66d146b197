package krafka.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.Metric;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.MetricsData;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.ScopeMetrics;

/**
 * A broker metrics reporter receiving KIP-714 client metrics: each push becomes one line of the
 * file named by the broker property krafka.telemetry.file, tab-separated:
 * instance id, terminating, content type, client id, then name=value of every metric point.
 */
public class TelemetryRecorder implements MetricsReporter, ClientTelemetryExporterProvider {
    private Path file;

    @Override
    public void configure(Map<String, ?> configs) {
        Object path = configs.get("krafka.telemetry.file");
        file = path == null ? null : Paths.get(path.toString());
    }

    @Override
    public void init(List<KafkaMetric> metrics) {}

    @Override
    public void metricChange(KafkaMetric metric) {}

    @Override
    public void metricRemoval(KafkaMetric metric) {}

    @Override
    public void close() {}

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this::record;
    }

    private synchronized void record(ClientTelemetryContext context, ClientTelemetryPayload payload) {
        StringJoiner line = new StringJoiner("\t", "", "\n");
        line.add(payload.clientInstanceId().toString());
        line.add(Boolean.toString(payload.isTerminating()));
        line.add(payload.contentType());
        line.add(context.authorizableRequestContext().clientId());
        try {
            ByteBuffer data = payload.data().duplicate();
            for (ResourceMetrics resource : MetricsData.parseFrom(data).getResourceMetricsList()) {
                for (ScopeMetrics scope : resource.getScopeMetricsList()) {
                    for (Metric metric : scope.getMetricsList()) {
                        line.add(metric.getName() + "=" + value(metric));
                    }
                }
            }
        } catch (IOException e) {
            line.add("PARSE-ERROR=" + e);
        }
        if (file == null) {
            return;
        }
        try {
            Files.write(file, line.toString().getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static double value(Metric metric) {
        List<NumberDataPoint> points = metric.hasGauge()
                ? metric.getGauge().getDataPointsList()
                : metric.getSum().getDataPointsList();
        return points.isEmpty() ? Double.NaN : points.get(0).getAsDouble();
    }
}
