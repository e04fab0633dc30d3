# Português (CLDR "pt", written as in Brazil; pt-PT and pt-BR guests both get it).
# Same message ids as en.ftl. CLDR data: pt (https://cldr.unicode.org/).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = a partir de { $date }
datetime-local = { $date }, { $time } (horário local)

## Shared phrases
hi = Olá, { $name },
hi-no-name = Olá,
label-colon = { $label }:
label-hotel = Hotel
label-booking = Reserva
label-booking-id = ID da reserva
label-hcn = Número de confirmação do hotel
label-checkin = Check-in
label-checkout = Check-out
label-room = Quarto
label-room-n = Quarto { $n }
label-guests = Hóspedes
label-total = Preço total
label-pnr = Código de reserva da companhia aérea
label-passengers = { $count ->
    [one] Passageiro
   *[other] Passageiros
}
nights = { $count ->
    [one] { $count } noite
   *[other] { $count } noites
}
adults = { $count ->
    [one] { $count } adulto
   *[other] { $count } adultos
}
children = { $count ->
    [one] { $count } criança
   *[other] { $count } crianças
}
instructions-title = Instruções de check-in

## Booking confirmation (hotel)
confirmation-subject = Sua estadia no { $hotel } está confirmada
confirmation-heading = Sua estadia está confirmada
confirmation-intro = Obrigado por reservar com a { $brand }. Sua estadia no { $hotel } está confirmada.
confirmation-hcn-known = Apresente o número de confirmação do hotel na recepção ao fazer o check-in e tenha o ID da reserva à mão se entrar em contato conosco.
confirmation-hcn-later = O número de confirmação do próprio hotel costuma chegar em outro e-mail alguns dias antes da chegada. Tenha o ID da reserva à mão se entrar em contato conosco.
confirmation-closing = Desejamos uma ótima viagem.

## Hotel confirmation number
hcn-subject = Seu número de confirmação de { $hotel }
hcn-heading = Seu número de confirmação do hotel
hcn-intro = O { $hotel } confirmou sua reserva no próprio sistema. Seu número de confirmação do hotel é:
hcn-intro-text = O { $hotel } confirmou sua reserva no próprio sistema.
hcn-line = Seu número de confirmação do hotel: { $number }
hcn-show = Apresente este número na recepção ao fazer o check-in: é assim que o hotel encontra sua reserva.
hcn-booking-id = Seu ID de reserva na { $brand } continua sendo { $id }. Tenha-o à mão se entrar em contato conosco.

## Arrival guide
arrival-subject = Sua estadia no { $hotel } começa em 3 dias
arrival-heading = Sua estadia começa em 3 dias
arrival-intro = Início da sua estadia no { $hotel }: { $date }. Aqui está tudo o que você precisa para a chegada.
arrival-before-title = Antes de partir
arrival-bring-id = Um documento com foto ou passaporte para o check-in
arrival-bring-card = Um cartão de pagamento para despesas extras: muitos hotéis bloqueiam um depósito na chegada
arrival-bring-booking-id = O ID da sua reserva
arrival-bring-both = O ID da sua reserva e o número de confirmação do hotel
arrival-late = Se seus planos mudarem ou se você for chegar tarde, responda a este e-mail.
arrival-closing = Boa viagem!

## Check-in day
checkin-subject = Hoje: check-in no { $hotel }
checkin-heading = O check-in é hoje
checkin-intro = Hoje você faz o check-in no { $hotel }. Desejamos uma ótima viagem.
checkin-ready = Tenha seu documento com foto e um cartão de pagamento prontos na recepção. Se você se atrasar, responda a este e-mail e avisaremos o hotel.

## Thank you
thanks-subject = Obrigado por se hospedar no { $hotel }
thanks-heading = Obrigado
thanks-intro = Obrigado por se hospedar no { $hotel }. Esperamos que tenha aproveitado muito e feito uma boa viagem de volta.
thanks-reply = Se algo na sua estadia precisar da nossa atenção, basta responder a este e-mail.
thanks-regards = Um abraço,

## Booking updated
updated-subject = Sua reserva no { $hotel } foi atualizada
updated-heading = Sua reserva foi atualizada
updated-intro = Sua reserva no { $hotel } foi atualizada.
updated-what-changed = Veja o que mudou:
updated-before = Antes
updated-now = Agora
updated-current = Sua reserva agora
updated-unexpected = Se essa mudança não era o que você esperava, responda a este e-mail informando o ID da sua reserva.
field-hotel-id = Código do hotel
field-hotel-name = Hotel
field-checkin = Check-in
field-checkout = Check-out
field-room-name = Quarto { $n }
field-room-board = Regime, quarto { $n }
field-room-adults = Adultos, quarto { $n }
field-room-children = Crianças, quarto { $n }
field-guests = Hóspedes
field-holder = Reserva em nome de
field-hotel-confirmation-number = Número de confirmação do hotel
field-segment-flight-number = Número do voo, voo { $n }
field-segment-origin = Origem, voo { $n }
field-segment-destination = Destino, voo { $n }
field-segment-departure = Partida, voo { $n }
field-segment-arrival = Chegada, voo { $n }
field-passengers = Passageiros

## Flights
flight-subject = Seu voo { $from } → { $to } está confirmado
flight-heading = Seu voo está confirmado
flight-intro = Obrigado por reservar com a { $brand }. Seu voo de { $from } para { $to } está confirmado.
flight-list-title = { $count ->
    [one] Seu voo
   *[other] Seus voos
}
flight-number = Voo { $number }
flight-departs = Partida
flight-arrives = Chegada
flight-local-times = Todos os horários são locais do aeroporto em questão.
flight-checkin-pnr = Use o código de reserva da companhia aérea para fazer o check-in com ela.
flight-rules = Confira as regras de check-in e bagagem da companhia aérea antes de viajar e verifique se os nomes dos passageiros correspondem aos documentos de viagem.
flight-closing = Desejamos um ótimo voo.
flight-changed-subject = Importante: o horário do seu voo mudou
flight-changed-heading = O horário do seu voo mudou
flight-changed-intro = A companhia aérea alterou o horário da sua reserva de voo. Confira os novos horários abaixo.
flight-changed-intro-pnr = A companhia aérea alterou o horário da sua reserva de voo { $pnr }. Confira os novos horários abaixo.
flight-changed-new = Novo horário
flight-changed-previous = Horário anterior
flight-changed-todo = O que fazer
flight-changed-reply = Responda a este e-mail para aceitar o novo horário. Se os novos horários não servirem para você, fale conosco respondendo a este e-mail e veremos as alternativas com você.
flight-booking-title = Reserva de voo { $id }

## Cancellation
cancelled-subject = Sua reserva { $id } foi cancelada
cancelled-heading = Sua reserva foi cancelada
cancelled-intro = Sua reserva { $id } foi cancelada.
cancelled-fee = Taxa de cancelamento
cancelled-refund = Valor do reembolso
cancelled-fee-applies = Esta reserva tem taxa de cancelamento.
cancelled-questions = Se você não esperava este cancelamento ou tiver alguma dúvida, responda a este e-mail informando o ID da sua reserva.

## Booking not confirmed
notice-title-cancelled = Sua reserva foi cancelada
notice-title-not-confirmed = Não conseguimos confirmar sua reserva
notice-cancelled = Sentimos muito: sua reserva foi cancelada. O fornecedor não pôde mantê-la, então não viaje com base na confirmação que enviamos.
notice-cancelled-trip = Sentimos muito: sua reserva de { $trip } foi cancelada. O fornecedor não pôde mantê-la, então não viaje com base na confirmação que enviamos.
notice-not-confirmed = Sentimos muito: não conseguimos confirmar sua reserva. O fornecedor não conseguiu concluí-la, então não há nenhuma reserva em seu nome.
notice-not-confirmed-trip = Sentimos muito: não conseguimos confirmar sua reserva de { $trip }. O fornecedor não conseguiu concluí-la, então não há nenhuma reserva em seu nome.
notice-book-again = Se ainda quiser viajar, fique à vontade para reservar de novo; os preços e a disponibilidade podem ter mudado. Se tiver alguma dúvida, basta responder a este e-mail.
refund-not-charged = Nenhum valor foi cobrado.
refund-unknown = Se algum pagamento foi cobrado por esta reserva, ele será reembolsado integralmente; entraremos em contato se precisarmos de algo.
refund-refunding = Seu pagamento está sendo reembolsado no cartão usado. Os reembolsos costumam levar de 5 a 10 dias úteis para aparecer na fatura.
refund-refunding-amount = Seu pagamento de { $amount } está sendo reembolsado no cartão usado. Os reembolsos costumam levar de 5 a 10 dias úteis para aparecer na fatura.
refund-refunded = Seu pagamento foi reembolsado no cartão usado. Costuma levar de 5 a 10 dias úteis para aparecer na fatura.
refund-refunded-amount = Seu pagamento de { $amount } foi reembolsado no cartão usado. Costuma levar de 5 a 10 dias úteis para aparecer na fatura.
refund-arranging = Estamos providenciando seu reembolso e confirmaremos por e-mail assim que ele for feito.

## Unfinished checkout
checkout-trip-stay = sua estadia, { $dates }
checkout-subject = Sua reserva não foi concluída — nada foi cobrado
checkout-heading = Sua reserva não foi concluída
checkout-intro = Você começou uma reserva com a { $brand }, mas ela não foi concluída, e nada foi cobrado.
checkout-intro-trip = Você começou uma reserva com a { $brand } para { $trip }, mas ela não foi concluída, e nada foi cobrado.
checkout-reasons = Se você mudou de ideia, não precisa fazer nada. Se pretendia reservar, estes são os dois motivos mais comuns para um pagamento com cartão não ser aprovado, e como resolver cada um:
checkout-retry = Tentar a reserva novamente
checkout-retry-prices = Os preços e a disponibilidade podem mudar, então confira de novo ao tentar novamente. Se algo mais deu errado, basta responder a este e-mail.
declined-funds-subject = Seu pagamento não foi aprovado: saldo ou limite insuficiente
declined-security-subject = Seu pagamento foi bloqueado por uma verificação de segurança
declined-intro = Sua reserva com a { $brand } não foi concluída, e nada foi cobrado. Verificamos o pagamento e foi isto que o impediu:
declined-intro-trip = Sua reserva com a { $brand } para { $trip } não foi concluída, e nada foi cobrado. Verificamos o pagamento e foi isto que o impediu:
declined-questions = Os preços e a disponibilidade podem mudar, então confira de novo ao tentar novamente. Se tiver alguma dúvida, basta responder a este e-mail.
fix-funds-title = Saldo ou limite de crédito insuficiente
fix-funds-why = O saldo ou o limite do cartão pode não cobrir o valor total da estadia, ou um limite diário de gastos pode ter sido atingido.
fix-funds-how = Como resolver: use outro cartão ou peça ao seu banco para aumentar o limite ou transferir fundos para este cartão e tente novamente.
fix-security-title = Uma verificação de segurança do emissor do cartão ou do processador de pagamentos
fix-security-why = Bancos e processadores de pagamento às vezes bloqueiam um pagamento que parece incomum, por exemplo um valor maior, um pagamento no exterior ou uma primeira compra em uma loja nova. Isso protege você e não diz nada de ruim a seu respeito.
fix-security-how = Como resolver: aprove o pagamento no app do seu banco ou ligue para o número no verso do cartão e diga que deseja fazer este pagamento; depois, tente novamente.

## Marketing footer and unsubscribe pages
marketing-footer = Este é um e-mail de marketing da { $brand }.
marketing-unsubscribe-link = Cancelar a inscrição nos e-mails de marketing
marketing-unsubscribe-one-click = com um clique.
marketing-unsubscribe-text = Cancelar a inscrição nos e-mails de marketing com um clique: { $url }
marketing-bookings-still = Os e-mails sobre suas reservas continuarão chegando.
unsubscribe-title = Cancelar a inscrição nos e-mails de marketing
unsubscribe-question = Cancelar a inscrição nos e-mails de marketing?
unsubscribe-who = { $email } não receberá mais e-mails de marketing da { $brand }.
unsubscribe-bookings-still = Os e-mails sobre suas reservas (confirmações, alterações, detalhes de check-in) continuarão chegando.
unsubscribe-button = Cancelar inscrição
unsubscribe-nothing-yet = Abrir esta página não alterou nada.
unsubscribe-retry-title = Tente novamente mais tarde
unsubscribe-retry = Não foi possível processar sua solicitação agora. Nada foi alterado.
unsubscribe-invalid-title = Este link de cancelamento não é válido
unsubscribe-invalid-cut = Ele pode ter sido cortado ou alterado. Abra o link do e-mail novamente ou copie-o inteiro. Nada foi alterado.
unsubscribe-invalid-list = Este não é um link para cancelar a inscrição nos e-mails de marketing. Nada foi alterado.
unsubscribe-post-title = Nada foi alterado
unsubscribe-post-only = Um pedido de cancelamento deve ser um POST com o corpo List-Unsubscribe=One-Click (RFC 8058). Use o botão da página de cancelamento.
unsubscribe-done-title = Sua inscrição foi cancelada
unsubscribe-done = { $email } não receberá mais e-mails de marketing. Os e-mails sobre suas reservas continuarão chegando.
unsubscribe-done-brand = { $email } não receberá mais e-mails de marketing da { $brand }. Os e-mails sobre suas reservas continuarão chegando.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = Sobre a sua reserva { $ref }
answer-about = A sua reserva { $ref }
answer-reply = Para nos escrever de novo, basta responder a este e-mail.

## Board types
board-room-only = Somente hospedagem
board-breakfast = Café da manhã incluído
board-half-board = Meia pensão
board-full-board = Pensão completa
board-all-inclusive = Tudo incluído

## The calendar attachment
calendar-note-add = { $count ->
    [one] O arquivo de calendário anexo adiciona esta reserva à sua agenda. Nossos próximos e-mails vão atualizá-la, e um cancelamento a remove.
   *[other] Os arquivos de calendário anexos adicionam cada voo à sua agenda. Nossos próximos e-mails vão atualizá-los, e um cancelamento os remove.
}
calendar-note-cancel = { $count ->
    [one] O arquivo de calendário anexo remove da sua agenda a reserva cancelada.
   *[other] Os arquivos de calendário anexos removem da sua agenda os voos cancelados.
}
calendar-note-update-remove = Os arquivos de calendário anexos atualizam seus voos na agenda e removem os voos que deixaram de existir.
